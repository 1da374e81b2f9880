"""UTC ``...Z`` times (live_trial.clock): the formats every record has always carried, read back the same way."""
from __future__ import annotations

import re
import time
from datetime import datetime, timedelta, timezone

import pytest

from live_trial.clock import epoch_of, epoch_or_none, iso_z, parse_iso_z, utc_now

T0 = datetime(2026, 12, 1, 9, 42, 37, 123456, tzinfo=timezone.utc)
#: Epochs around the edges of a millisecond and of a second (a fraction just below .0005, .9995, 1.0).
EPOCHS = (0, 1, 1.9999999, 1_800_000_000.0, 1_800_000_000.0004999, 1_800_000_000.0005, 1_800_000_000.9995,
          1_800_000_000.999999, 1_764_582_157.123456)


def test_a_datetime_is_written_with_milliseconds_and_z_cut_not_rounded():
    assert iso_z(T0) == "2026-12-01T09:42:37.123Z"
    assert iso_z(T0.replace(microsecond=999_999)) == "2026-12-01T09:42:37.999Z"
    assert iso_z(T0, timespec="seconds") == "2026-12-01T09:42:37Z"


def test_an_aware_datetime_is_converted_to_utc_and_a_naive_one_is_taken_as_utc():
    tokyo = T0.astimezone(timezone(timedelta(hours=9)))
    assert iso_z(tokyo) == iso_z(T0) == "2026-12-01T09:42:37.123Z"
    assert iso_z(T0.replace(tzinfo=None)) == iso_z(T0)


@pytest.mark.parametrize("t", EPOCHS)
def test_an_epoch_is_written_as_the_records_always_wrote_it(t):
    # The spellings each record used before they shared this one (poll-state.json's times, the lease's sentence).
    assert iso_z(t) == datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    assert iso_z(t, timespec="seconds") == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def test_an_unknown_timespec_is_refused():
    with pytest.raises(ValueError, match="timespec"):
        iso_z(T0, timespec="microseconds")


def test_a_written_time_reads_back_to_the_same_moment():
    text = iso_z(T0)
    assert parse_iso_z(text) == T0.replace(microsecond=123_000)
    assert parse_iso_z(text).tzinfo is not None
    assert epoch_of(text) == T0.replace(microsecond=123_000).timestamp()
    assert iso_z(epoch_of(text)) == text
    for t in (1_800_000_000.25, 1_800_000_000.5, 0.0):
        assert epoch_of(iso_z(t)) == t


def test_an_offset_is_read_and_a_text_without_one_is_taken_as_utc():
    assert parse_iso_z("2026-12-01T18:42:37.123+09:00") == T0.replace(microsecond=123_000)
    assert parse_iso_z("2026-12-01T09:42:37") == T0.replace(microsecond=0)
    assert epoch_of("1970-01-01T00:00:01Z") == 1.0


@pytest.mark.parametrize("bad", ["", "soon", "2026-13-01T00:00:00Z", "2026-12-01T09:42:37ZZ"])
def test_a_text_that_is_no_time_raises_value_error(bad):
    with pytest.raises(ValueError):
        parse_iso_z(bad)
    with pytest.raises(ValueError):
        epoch_of(bad)
    assert epoch_or_none(bad) is None


def test_a_value_that_is_not_a_string_raises_attribute_error_and_is_none_to_the_lenient_reading():
    with pytest.raises(AttributeError):
        parse_iso_z(None)  # type: ignore[arg-type]
    for value in (None, 5, 1.5, [], {"at": "x"}):
        assert epoch_or_none(value) is None
    assert epoch_or_none("1970-01-01T00:00:01.500Z") == 1.5


def test_now_is_written_as_every_record_writes_it():
    before = time.time()
    now = utc_now()
    after = time.time()
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z", now)
    assert before - 0.001 <= epoch_of(now) <= after
