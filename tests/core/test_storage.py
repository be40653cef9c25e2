"""Prefect-free storage helpers: S3 URIs, safe file names, the local session store."""

from __future__ import annotations

import json

import pytest

from webtask_core.errors import ConfigError, SessionFormatError
from webtask_core.storage import (
    LocalSessionStore,
    make_saved_session,
    open_session_store,
    parse_s3_uri,
    path_inside,
    safe_file_name,
)


def test_parse_s3_uri_keeps_the_key_as_written():
    assert parse_s3_uri("s3://b/a/../x y.jpg") == ("b", "a/../x y.jpg")
    assert parse_s3_uri("s3://b//abs").key == "/abs"
    for bad in ("s3://", "s3://bucket", "s3://bucket/", "http://b/k", "s3:///key"):
        with pytest.raises(ConfigError):
            parse_s3_uri(bad)


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("photos/front.jpg", "front.jpg"),
        ("../../etc/passwd", "passwd"),
        ("/abs/key", "key"),
        ("..", "file"),
        ("a/..", "a"),
        (".bashrc", "bashrc"),
        ("C:\\Users\\me\\pic.png", "pic.png"),
        ("my photo (1).png", "my_photo_1_.png"),
        ("фото.jpg", "фото.jpg"),
        ("e\u0301.png", "é.png"),  # NFC
        ("???", "file"),
        ("x\x00y", "x_y"),
    ],
)
def test_safe_file_name(raw, expected):
    assert safe_file_name(raw) == expected


def test_safe_file_name_is_bounded_and_keeps_the_extension():
    name = safe_file_name("a" * 500 + ".jpeg")
    assert len(name) <= 120 and name.endswith(".jpeg")


def test_path_inside_refuses_escapes(tmp_path):
    assert path_inside(tmp_path, "a", "b.txt") == (tmp_path / "a" / "b.txt").resolve()
    for parts in (("..", "x"), ("/etc/passwd",), (".",)):
        with pytest.raises(ConfigError, match="escape"):
            path_inside(tmp_path, *parts)


def test_symlink_out_of_the_folder_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    inside = tmp_path / "inside"
    inside.mkdir()
    (inside / "link").symlink_to(outside)
    with pytest.raises(ConfigError, match="escape"):
        path_inside(inside, "link", "f.txt")


def test_local_store_sync_round_trip_and_schema_check(tmp_path):
    store = open_session_store(tmp_path)
    assert isinstance(store, LocalSessionStore)
    store.save("k1", make_saved_session({"a": 1}, storage_state={"cookies": []}, last_url="http://x/"))
    assert store.load("k1").session == {"a": 1}

    data = json.loads((tmp_path / "k1.json").read_text())
    data["schema_version"] = 2
    (tmp_path / "k1.json").write_text(json.dumps(data))
    with pytest.raises(SessionFormatError, match="schema_version 2"):
        store.load("k1")


def test_s3_location_needs_a_client():
    with pytest.raises(ConfigError, match="no S3 client"):
        open_session_store("s3://bucket/prefix/")
