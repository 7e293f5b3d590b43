"""The one timestamp format: what now_iso writes and where the library stores it."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from tests.helpers.paths import FIXTURES
from thoughtdesk.core.importing.importer import import_thoughtsource
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.timestamps import now_iso, thoughtsource_date

ISO_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def test_now_iso_is_utc_to_the_second_and_sorts_as_time():
    before = datetime.now(UTC).replace(microsecond=0)
    stamp = now_iso()
    after = datetime.now(UTC)
    assert ISO_UTC.fullmatch(stamp)
    assert before <= datetime.fromisoformat(stamp) <= after
    assert "2024-05-01T09:30:12Z" < "2024-05-01T10:00:00Z" < "2024-12-01T00:00:00Z"


def test_thoughtsource_date_of_new_and_old_stamps():
    assert thoughtsource_date("2024-05-01T09:30:12Z") == "2024/05/01 09:30:12"
    assert thoughtsource_date("2024-05-01T09:30:12.345+00:00") == "2024/05/01 09:30:12"  # written before


def test_library_rows_are_stamped_in_the_one_format(tmp_path):
    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        import_thoughtsource(lib, FIXTURES / "thoughtsource" / "edge_cases.json", collection="c")
        stamps = [r[0] for r in lib.conn.execute("SELECT applied FROM _migrations")]
        stamps += [r[0] for r in lib.conn.execute("SELECT created FROM collection")]
    assert stamps and all(ISO_UTC.fullmatch(stamp) for stamp in stamps), stamps
