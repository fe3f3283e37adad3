"""P-Mem's own arms: write-time commit (Tables 6, 8, §4.2.3), the state read (Table 7), the
turn read with supersession pruning and its gates (Tables 3-5, 9), the materialized state
(Appendix D)."""
