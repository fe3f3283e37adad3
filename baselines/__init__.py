"""Every comparison arm other than P-Mem, one module each (arrives with the harness)."""
