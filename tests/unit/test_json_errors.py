"""The explorer finds where malformed JSON goes wrong itself, whatever the decoding library's message says
(msgspec 0.22 raised UnicodeDecodeError counted inside the string; 0.23 says "Invalid UTF-8 encoded string")."""

from __future__ import annotations

import msgspec
import pytest

from explorer import json_errors
from explorer.api import open_document
from explorer.errors import LoadError
from explorer.json_errors import find_fault, first_invalid_utf8, line_and_column, locate_json_error
from tests.conftest import SAMPLE_DATA


@pytest.mark.parametrize(
    ("data", "offset", "reason", "path"),
    [
        (b'{"a": "x\xff"}', 8, "byte 0xFF is not UTF-8 text inside a string", "$.a"),
        (b'{"a":\xff}', 5, "byte 0xFF is not UTF-8 text", "$.a"),
        (b'{"a": {"b": [1, {"c": "[x\xff"}]}}', 25, "byte 0xFF is not UTF-8 text inside a string", "$.a.b[1].c"),
        (b'{"a": [1, 2,', 12, "the file ends in the middle of a JSON value (truncated)", "$.a[2]"),
        (b'{"a": tru', 9, "the file ends in the middle of a JSON value (truncated)", "$.a"),
        (b"", 0, "the file ends in the middle of a JSON value (truncated)", "$"),
        (b'{"a": [1 2]}', 9, 'expected "," or "]", got "2"', "$.a"),
        (b"[1,2,3,4,5,6,,7]", 13, 'expected a value, got ","', "$[6]"),
        (b'{"a":1,"b":2,"c":3,"d":[1,2,3,"x,y",4,5 6]}', 40, 'expected "," or "]", got "6"', "$.d"),
        (b'{"a":1,"b":2,,"c":3}', 13, 'expected a key in double quotes, got ","', "$"),
        (b'{"a":1,"b":2,"c"3}', 16, 'expected ":" after the key, got "3"', "$.c"),
        (b'{"a": "\x01"}', 7, "a control character (byte 0x01) inside a string", "$.a"),
        (b'{"a": [], "b": {}}  x', 20, 'expected the end of the file after the value, got "x"', "$"),
        (b'{"a\\u0041": [', 13, "the file ends in the middle of a JSON value (truncated)", "$.aA[0]"),
        (b'{"0": [{"id": 1}, {"id": 2, "buffer": [{"x": 1}, {"x": "\xfe"}]}]}', 56,
         "byte 0xFE is not UTF-8 text inside a string", '$["0"][1].buffer[1].x'),
    ],
)
def test_the_first_fault_its_reason_and_its_path(data, offset, reason, path):
    fault = find_fault(data)
    assert fault is not None
    assert (fault.offset, fault.reason, fault.path) == (offset, reason, path)


@pytest.mark.parametrize("data", [b"{}", b"[]", b'{"a": [1, -2.5e3, true, null, "x,y"], "b": {"c": "\\u00e9"}}'])
def test_well_formed_json_has_no_fault(data):
    assert find_fault(data) is None


def test_the_first_invalid_utf8_byte_across_chunks(monkeypatch):
    monkeypatch.setattr(json_errors, "_UTF8_CHUNK", 4)
    assert first_invalid_utf8("aé€x".encode() + b"\xc3") == 7  # a sequence cut by the end of the data
    assert first_invalid_utf8(b"abc\xe2\x82" + b"zz") == 3  # a sequence broken across two chunks
    assert first_invalid_utf8("aé€".encode()) is None
    assert line_and_column(b"ab\ncd\nef", 7) == (3, 2)


def test_the_location_is_the_same_whatever_the_library_says():
    data = b'{\n  "Nodes": [{"Name": "conv\xff"}]\n}'
    worded_023 = msgspec.DecodeError("Invalid UTF-8 encoded string")
    raised_022 = UnicodeDecodeError("utf-8", b"conv\xff", 4, 5, "invalid start byte")
    expected = ("line 2, column 27 (byte 28) in $.Nodes[0].Name", "byte 0xFF is not UTF-8 text inside a string")
    assert locate_json_error(data, worded_023) == expected
    assert locate_json_error(data, raised_022) == expected
    assert locate_json_error(data, msgspec.DecodeError("something else entirely")) == expected


def test_well_formed_json_keeps_the_library_path():
    """Valid JSON a typed decoder refused (a number out of range): the library's path is all there is."""
    error = msgspec.ValidationError("Number out of range - at `$[...]`")
    assert locate_json_error(b'{"a": 1e999999}', error) == ("$[…]", "number out of range")


def test_past_the_scan_a_bad_byte_is_still_located(monkeypatch):
    monkeypatch.setattr(json_errors, "SCAN_BYTES", 16)
    data = b'{"a": [' + b"1, " * 20 + b'"\xff"]}'
    assert locate_json_error(data) == ("line 1, column 69 (byte 68)", "byte 0xFF is not UTF-8 text")


def _with_bad_byte(sample: str, after: bytes) -> tuple[bytes, int]:
    """A bundled sample with 0xFF put inside the first string value that follows `after`."""
    data = (SAMPLE_DATA / sample).read_bytes()
    at = data.index(b'"', data.index(after) + len(after)) + 2
    return data[:at] + b"\xff" + data[at:], at


def failing_as(monkeypatch, wording: str) -> None:
    """msgspec made to fail on a byte that is not UTF-8 as version `wording` does."""
    real = msgspec.json.decode

    def decode(data, *args, **kwargs):
        if b"\xff" in bytes(data):
            if wording == "0.22":
                raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")
            raise msgspec.DecodeError("Invalid UTF-8 encoded string")
        return real(data, *args, **kwargs)

    monkeypatch.setattr(msgspec.json, "decode", decode)


@pytest.mark.parametrize(
    ("sample", "after", "save_as", "path"),
    [
        ("views_ark_model.json", b'"Name":', "model.json", "$.Nodes[0].Op.Name"),
        ("demo_pipeline_b1.json", b'"operation":', "pipeline_b1.json", "$.src_quantize_1_1.operation"),
    ],
)
@pytest.mark.parametrize("wording", ["0.22", "0.23"])
def test_loaders_locate_bad_utf8_under_either_msgspec(tmp_path, monkeypatch, sample, after, save_as, path, wording):
    """The loaders' errors, with msgspec made to fail on a bad byte as each version does."""
    failing_as(monkeypatch, wording)
    content, at = _with_bad_byte(sample, after)
    file = tmp_path / save_as
    file.write_bytes(content)
    with pytest.raises(LoadError) as raised:
        open_document(file)
    line, column = line_and_column(content, at)
    where = f"line {line}, column {column} (byte {at})"
    assert raised.value.location == f"{where} in {path}"
    assert "is not UTF-8 text inside a string" in raised.value.message


@pytest.mark.parametrize("wording", ["0.22", "0.23"])
def test_a_schedule_workload_with_a_bad_byte_is_dropped_in_our_words(tmp_path, monkeypatch, wording):
    failing_as(monkeypatch, wording)
    content, _ = _with_bad_byte("clean_2x2_stschedule.json", b'"layer_name" :')
    file = tmp_path / "x_stschedule.json"
    file.write_bytes(content)
    (dropped,) = [p for p in open_document(file).problems if p.code.startswith("bad-")]
    assert dropped.message.startswith("byte 0xFF is not UTF-8 text inside a string at "), dropped.message
