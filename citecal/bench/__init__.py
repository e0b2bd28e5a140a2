"""Benchmarks against people: the ground-truth label sets (datasets/groundtruth/README.md)."""

from citecal.bench._baseline import (
    Baseline,
    check_baseline_sets,
    read_baseline,
    regressions,
    write_baseline,
)
from citecal.bench._labels import (
    CitationLabel,
    GroundTruth,
    LabelSet,
    dataset_inputs,
    label_files,
    load_groundtruth,
)
from citecal.bench._render import render_bench_markdown, render_bench_table
from citecal.bench._score import BenchReport, Metrics, run_groundtruth

__all__ = [
    "Baseline",
    "BenchReport",
    "CitationLabel",
    "GroundTruth",
    "LabelSet",
    "Metrics",
    "check_baseline_sets",
    "dataset_inputs",
    "label_files",
    "load_groundtruth",
    "read_baseline",
    "regressions",
    "render_bench_markdown",
    "render_bench_table",
    "run_groundtruth",
    "write_baseline",
]
