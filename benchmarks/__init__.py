"""The harness that reproduces the paper (the `harness` extra): the runner and the interfaces arms
implement (`runner/`), model access (`models/`), one package per benchmark
(`alfworld_revision/`, `factconsolidation/`, `longmemeval/`, `smoke/`), scoring (`scoring/`),
statistics (`stats`) and reports (`reports/`). docs/architecture.md draws the rooms and the rule
at each boundary."""
