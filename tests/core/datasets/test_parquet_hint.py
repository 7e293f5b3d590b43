"""What a user is told when Parquet is asked for without pyarrow."""

from __future__ import annotations

import sys

from thoughtdesk.core.datasets.generic import parquet_missing_hint


def test_installed_with_pip_the_hint_says_what_to_install(monkeypatch):
    monkeypatch.delattr(sys, "frozen", raising=False)
    assert "pip install 'thoughtdesk[parquet]'" in parquet_missing_hint()


def test_the_packaged_app_says_it_has_no_parquet_and_what_to_use_instead(monkeypatch):
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    hint = parquet_missing_hint()
    assert "packaged ThoughtDesk has no Parquet support" in hint and "JSONL or CSV" in hint
