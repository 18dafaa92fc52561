"""The run state's skip keys hash files through the one file hash (common.fileio.hash_files) and
are what they were before it: an existing run's stages are not measured or trained again."""
from perfalign.flows.runstate import fingerprint

# fingerprint("d", "f.txt", "missing", extra=[1]) of the folder below, by the code before hash_files
BEFORE = "8a5533bb458bab6c1334"


def test_skip_keys_are_unchanged(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / "a.txt").write_text("a")
    (tmp_path / "d" / "sub" / "b.txt").write_text("b")
    (tmp_path / "d" / ".hidden").write_text("left out")
    (tmp_path / "f.txt").write_text("f")
    key = fingerprint("d", "f.txt", "missing", extra=[1])
    assert key == BEFORE
    (tmp_path / "d" / ".hidden").write_text("changed")
    assert fingerprint("d", "f.txt", "missing", extra=[1]) == key
    (tmp_path / "d" / "sub" / "b.txt").write_text("changed")
    assert fingerprint("d", "f.txt", "missing", extra=[1]) != key
