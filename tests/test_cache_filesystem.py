"""The response cache refuses a network filesystem, where SQLite's WAL cannot be shared."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.models import cache as cache_module
from benchmarks.models.cache import filesystem_of

MOUNTS = """\
sysfs /sys sysfs rw 0 0
/dev/sda1 / ext4 rw,relatime 0 0
nas:/export/home /home nfs4 rw,vers=4.2 0 0
/dev/nvme0n1 /home/user/scratch xfs rw 0 0
lustre@tcp:/fs /lustre lustre rw 0 0
"""


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/home/user/runs/cache.sqlite", "nfs4"),
        ("/home/user/scratch/cache.sqlite", "xfs"),  # a local disk mounted inside the share
        ("/lustre/project/runs", "lustre"),
        ("/tmp/cache.sqlite", "ext4"),
        ("/homeless", "ext4"),  # a prefix of a mount point is not inside it
    ],
)
def test_the_filesystem_under_a_path_is_its_longest_mount(path: str, kind: str) -> None:
    assert filesystem_of(Path(path), MOUNTS) == kind


def test_a_cache_on_a_network_filesystem_is_refused_in_one_line(tmp_path, monkeypatch) -> None:
    """SQLite's WAL is unsafe over NFS; parallel cluster jobs sharing one cache there would
    corrupt it. The cache refuses, naming the file, the filesystem and the way out."""
    mounts = tmp_path / "mounts"  # this machine's mount table, with tmp_path an NFS share
    mounts.write_text(f"/dev/sda1 / ext4 rw 0 0\nnas:/export {tmp_path.resolve()} nfs4 rw 0 0\n")
    monkeypatch.setattr(cache_module, "MOUNTS", mounts)
    monkeypatch.delenv("PMEM_CACHE_ON_NETWORK_FS", raising=False)
    with pytest.raises(cache_module.CacheOnNetworkFilesystem, match=r"nfs4.*run\.cache"):
        cache_module.ResponseCache(tmp_path / "cache.sqlite")
    assert not (tmp_path / "cache.sqlite").exists()
    monkeypatch.setenv("PMEM_CACHE_ON_NETWORK_FS", "1")  # the user's own decision
    with cache_module.ResponseCache(tmp_path / "cache.sqlite") as cache:
        assert cache.enabled
