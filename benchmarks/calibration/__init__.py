"""Calibrating the embedder profile's cosine thresholds on labelled pairs harvested from the
benchmarks' data and runs (docs/calibration.md; `scripts/calibrate_embedder.py` embeds and calls
`report`). The threshold arithmetic itself is `benchmarks.calibration.thresholds`."""
