"""Resources from a real (moto) S3 endpoint and local files, into a per-run folder."""

from __future__ import annotations

import pytest
from prefect import flow

from webtask_core.errors import ResourceError
from webtask_flows.resources import downloaded_resources, fetch_resources, resource_folder

ODD_KEYS = {
    "front": "photos/front.jpg",
    "escape": "../../etc/passwd",
    "absolute": "/abs/key",
    "unicode": "ünïcødé/фото 1.jpg",
    "spaces": "with spaces/my photo (1).png",
    "dots": "a/../../..",
}


def _put_all(s3_client, bucket: str) -> dict[str, bytes]:
    contents = {}
    for name, key in ODD_KEYS.items():
        body = f"{name}:{key}".encode()
        s3_client.put_object(Bucket=bucket, Key=key, Body=body)
        contents[name] = body
    return contents


async def test_downloads_odd_keys_and_keeps_them_inside_the_folder(s3_client, s3_bucket, tmp_path):
    contents = _put_all(s3_client, s3_bucket)
    local = tmp_path / "local.txt"
    local.write_text("local file")
    resources = {name: f"s3://{s3_bucket}/{key}" for name, key in ODD_KEYS.items()}
    resources["local"] = str(local)

    with resource_folder() as folder:
        paths = await fetch_resources(resources, folder, s3=s3_client)

        assert list(paths) == list(resources)  # caller's order
        assert paths["local"] == local
        for name in ODD_KEYS:
            path = paths[name]
            assert path.is_file()
            assert path.resolve().is_relative_to(folder.resolve())
            assert path.read_bytes() == contents[name]
            assert not path.name.startswith(".")
        assert paths["front"].name == "front.jpg"
        assert paths["escape"].name == "passwd"
        assert paths["absolute"].name == "key"
        assert paths["unicode"].name == "фото_1.jpg"
        assert paths["spaces"].name == "my_photo_1_.png"
        # every file of the folder is one we returned: nothing landed elsewhere in it
        files = {p for p in folder.rglob("*") if p.is_file()}
        assert files == {paths[name] for name in ODD_KEYS}
    assert not folder.exists()


async def test_missing_object_fails_before_anything_is_downloaded(s3_client, s3_bucket, tmp_path):
    s3_client.put_object(Bucket=s3_bucket, Key="ok.jpg", Body=b"ok")
    missing = f"s3://{s3_bucket}/listings/missing.jpg"
    with pytest.raises(ResourceError) as caught:
        await fetch_resources({"good": f"s3://{s3_bucket}/ok.jpg", "photo_2": missing}, tmp_path, s3=s3_client)
    assert caught.value.name == "photo_2"
    assert missing in str(caught.value) and "not found" in str(caught.value)
    assert list(tmp_path.iterdir()) == []


async def test_missing_bucket_is_named(s3_client, tmp_path):
    uri = "s3://no-such-bucket-webtask/photo.jpg"
    with pytest.raises(ResourceError) as caught:
        await fetch_resources({"photo": uri}, tmp_path, s3=s3_client)
    message = str(caught.value)
    assert "bucket 'no-such-bucket-webtask' does not exist" in message and uri in message
    assert list(tmp_path.iterdir()) == []


async def test_every_problem_is_reported_at_once(s3_client, s3_bucket, tmp_path):
    with pytest.raises(ResourceError) as caught:
        await fetch_resources(
            {"a": f"s3://{s3_bucket}/a.jpg", "b": str(tmp_path / "b.jpg"), "c": "s3://bucket-only"},
            tmp_path,
            s3=s3_client,
        )
    message = str(caught.value)
    assert f"s3://{s3_bucket}/a.jpg" in message and "b.jpg" in message and "s3://bucket/key" in message


async def test_local_path_missing_or_directory(tmp_path):
    with pytest.raises(ResourceError, match="listing_image_1.*does not exist"):
        await fetch_resources({"listing_image_1": str(tmp_path / "nope.jpg")}, tmp_path)
    (tmp_path / "adir").mkdir()
    with pytest.raises(ResourceError, match="listing_image_2.*not a file"):
        await fetch_resources({"listing_image_2": str(tmp_path / "adir")}, tmp_path)


async def test_local_only_needs_no_s3_client(monkeypatch, tmp_path):
    # A credentials block that does not exist would fail if a client were made.
    monkeypatch.setenv("WEBTASK_AWS_CREDENTIALS_BLOCK", "no-such-block")
    file = tmp_path / "x.png"
    file.write_bytes(b"x")
    assert await fetch_resources({"x": file}, tmp_path) == {"x": file}


async def test_endpoint_from_environment(monkeypatch, s3_endpoint, s3_client, s3_bucket):
    s3_client.put_object(Bucket=s3_bucket, Key="env.txt", Body=b"from env")
    monkeypatch.setenv("WEBTASK_S3_ENDPOINT_URL", s3_endpoint)
    async with downloaded_resources({"doc": f"s3://{s3_bucket}/env.txt"}) as paths:
        assert paths["doc"].read_bytes() == b"from env"


async def test_aws_credentials_block_with_custom_endpoint(s3_endpoint, s3_client, s3_bucket):
    from prefect_aws import AwsCredentials

    s3_client.put_object(Bucket=s3_bucket, Key="block.txt", Body=b"via block")
    await AwsCredentials(
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
        aws_client_parameters={"endpoint_url": s3_endpoint},
    ).asave("webtask-test-s3", overwrite=True)

    @flow
    async def uses_block() -> bytes:  # inside a flow run, as in production
        async with downloaded_resources({"doc": f"s3://{s3_bucket}/block.txt"}, s3="webtask-test-s3") as paths:
            return paths["doc"].read_bytes()

    assert await uses_block() == b"via block"


async def test_folder_removed_after_success_and_after_failure(s3_client, s3_bucket, tmp_path):
    s3_client.put_object(Bucket=s3_bucket, Key="p.jpg", Body=b"p")
    uri = f"s3://{s3_bucket}/p.jpg"
    async with downloaded_resources({"p": uri}, s3=s3_client) as paths:
        kept = paths["p"]
        assert kept.exists()
    assert not kept.parent.parent.exists()

    with pytest.raises(RuntimeError, match="the run failed"):
        async with downloaded_resources({"p": uri}, s3=s3_client) as paths:
            failed = paths["p"]
            raise RuntimeError("the run failed")
    assert not failed.parent.parent.exists()

    # A failed check happens inside the folder's lifetime too: nothing is left behind.
    parent = tmp_path / "runs"
    parent.mkdir()
    with pytest.raises(ResourceError):
        async with downloaded_resources({"p": uri, "q": f"s3://{s3_bucket}/q.jpg"}, s3=s3_client, parent=parent):
            pytest.fail("the block must not run when a resource is missing")
    assert list(parent.iterdir()) == []


async def test_same_looking_resource_names_get_separate_folders(s3_client, s3_bucket, tmp_path):
    s3_client.put_object(Bucket=s3_bucket, Key="one/x.jpg", Body=b"1")
    s3_client.put_object(Bucket=s3_bucket, Key="two/x.jpg", Body=b"2")
    paths = await fetch_resources(
        {"image a": f"s3://{s3_bucket}/one/x.jpg", "image_a": f"s3://{s3_bucket}/two/x.jpg"}, tmp_path, s3=s3_client
    )
    assert paths["image a"] != paths["image_a"]
    assert paths["image a"].read_bytes() == b"1" and paths["image_a"].read_bytes() == b"2"
