"""Line index, binary sniffing and UTF-8 checks, in memory and streamed."""

from __future__ import annotations

import random
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citecal.config import ValidationConfig
from citecal.source import BinaryFile, DirectoryStore, SourceFile, UndecodableFile, _files
from citecal.source._files import CHUNK_BYTES, index_bytes

BOM = b"\xef\xbb\xbf"


def mem(data: bytes, path: str = "f.txt", sniff: int = 8192) -> SourceFile:
    return index_bytes(path, data, None, sniff)


def streamed(tmp_path: Path, data: bytes, name: str = "f.txt") -> SourceFile:
    """The same file through the large-file path (max_file_bytes below its size)."""
    root = tmp_path / "big"
    root.mkdir(exist_ok=True)
    (root / name).write_bytes(data)
    store = DirectoryStore(root, ValidationConfig(max_file_bytes=1))
    return store.read(name)


@pytest.mark.parametrize(
    ("data", "count"),
    [
        (b"", 0),
        (b"a", 1),
        (b"a\n", 1),
        (b"a\nb", 2),
        (b"a\nb\n", 2),
        (b"a\r\nb\r\n", 2),
        (b"a\r\nb", 2),
        (b"\n", 1),
        (b"\n\n", 2),
        (b"\r\n", 1),
        (b"a\rb\rc", 1),  # a lone CR does not end a line (as in git)
        (BOM, 0),
        (BOM + b"a\n", 1),
        (BOM + b"a\nb", 2),
    ],
)
def test_line_count(tmp_path: Path, data: bytes, count: int) -> None:
    assert mem(data).line_count == count
    if data:  # the streamed path needs a file larger than max_file_bytes=1
        assert streamed(tmp_path, data).line_count == count


def test_lines_strip_cr_and_bom_and_join_with_newline(tmp_path: Path) -> None:
    data = BOM + "déf f():\r\n    return 1\r\n\r\n# fin".encode()
    for f in (mem(data), streamed(tmp_path, data)):
        assert f.line_count == 4
        assert f.lines(1, 1) == "déf f():"
        assert f.lines(1, 2) == "déf f():\n    return 1"
        assert f.lines(2, 4) == "    return 1\n\n# fin"
        assert f.lines(3, 3) == ""
        assert f.lines(4, 4) == "# fin"
        assert f.text == "déf f():\n    return 1\n\n# fin"


def test_lines_outside_the_file_raise_value_error() -> None:
    f = mem(b"a\nb\n")
    for start, end in [(0, 1), (1, 3), (2, 1), (3, 3)]:
        with pytest.raises(ValueError, match="outside 1-2"):
            f.lines(start, end)
    with pytest.raises(ValueError):
        mem(b"").lines(1, 1)


def test_latin1_file_is_undecodable_with_byte_and_line() -> None:
    data = b"line one\nline two\ncaf" + b"\xe9 au lait\n"
    with pytest.raises(UndecodableFile) as info:
        mem(data, "docs/menu.txt")
    assert str(info.value) == "File is not valid UTF-8 text (byte 21, line 3): docs/menu.txt"


def test_utf16_file_is_reported_as_not_utf8_not_binary() -> None:
    data = "hello\nworld\n".encode("utf-16")
    with pytest.raises(UndecodableFile, match=r"UTF-16/32 byte order mark\): w\.txt"):
        mem(data, "w.txt")


def test_nul_byte_in_the_first_chunk_means_binary() -> None:
    with pytest.raises(BinaryFile) as info:
        mem(b"text\x00more", "data/blob.txt")
    assert str(info.value) == "Binary file: data/blob.txt"


def test_png_is_binary() -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
    with pytest.raises(BinaryFile, match=r"^Binary file: assets/logo\.png$"):
        mem(png, "assets/logo.png")


def test_binary_extension_with_non_text_content_is_binary_even_without_nul() -> None:
    # invalid UTF-8, no NUL: binary for a .bin file, undecodable text for a .txt file
    data = bytes(range(0x80, 0x100)) * 4
    with pytest.raises(BinaryFile):
        mem(data, "fw/image.bin")
    with pytest.raises(UndecodableFile):
        mem(data, "notes.txt")


def test_binary_extension_with_control_characters_is_binary() -> None:
    data = bytes([1, 2, 3, 4, 5, 6, 7]) * 100  # valid UTF-8 but mostly control characters
    with pytest.raises(BinaryFile):
        mem(data, "x.dll")
    assert mem(data, "x.txt").line_count == 1  # without the extension it is (odd) text


def test_text_file_with_a_binary_extension_stays_text() -> None:
    pointer = b"version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 12345\n"
    assert mem(pointer, "assets/logo.png").line_count == 3


def test_nul_after_the_sniff_window_is_not_binary() -> None:
    data = b"a" * 600 + b"\n\x00\n"
    assert mem(data, "x.txt", sniff=512).line_count == 2
    with pytest.raises(BinaryFile):
        mem(data, "x.txt", sniff=1024)


def _random_text(rng: random.Random, size: int, trailing_newline: bool) -> bytes:
    words = ["alpha", "β", "日本語", "emoji🙂", "x", "", "  indent", "tab\tbed", "ünïcödé"]
    out = bytearray()
    while len(out) < size:
        line = " ".join(rng.choice(words) for _ in range(rng.randint(0, 40))).encode()
        out += line + (b"\r\n" if rng.random() < 0.3 else b"\n")
    if not trailing_newline:
        out += "tail ☃".encode()
    return bytes(out)


@pytest.mark.parametrize("trailing_newline", [True, False])
def test_streamed_index_matches_in_memory_index(tmp_path: Path, trailing_newline: bool) -> None:
    rng = random.Random(7 + trailing_newline)
    data = BOM + _random_text(rng, int(2.6 * CHUNK_BYTES), trailing_newline)
    small = mem(data)
    big = streamed(tmp_path, data)
    assert big.line_count == small.line_count > 15_000
    n = small.line_count
    ranges = [(1, 1), (1, 5), (n, n), (n - 3, n), (1, n)]
    ranges += [tuple(sorted(rng.sample(range(1, n + 1), 2))) for _ in range(60)]
    for start, end in ranges:
        assert big.lines(start, end) == small.lines(start, end), (start, end)
    assert big.text == small.text


def test_streamed_index_handles_lines_on_chunk_boundaries(tmp_path: Path) -> None:
    # a newline exactly at the last byte of the first chunk, a multi-byte char across the next
    data = b"a" * (CHUNK_BYTES - 1) + b"\n" + b"b" * (CHUNK_BYTES - 1) + "é\nlast".encode()
    f = streamed(tmp_path, data)
    assert f.line_count == 3
    assert f.lines(2, 2) == "b" * (CHUNK_BYTES - 1) + "é"
    assert f.lines(3, 3) == "last"
    assert f.lines(1, 1) == "a" * (CHUNK_BYTES - 1)


def test_streamed_undecodable_reports_absolute_byte_and_line(tmp_path: Path) -> None:
    data = b"ok\n" * 500_000 + b"bad \xff here\n" + b"ok\n" * 10
    with pytest.raises(UndecodableFile) as info:
        streamed(tmp_path, data, "big.txt")
    assert str(info.value) == "File is not valid UTF-8 text (byte 1500004, line 500001): big.txt"


def test_streamed_undecodable_across_chunk_boundary_and_at_eof(tmp_path: Path) -> None:
    # a lead byte as the last byte of chunk 1 followed by a non-continuation byte
    data = b"a" * (CHUNK_BYTES - 1) + b"\xc3" + b"(\n"
    with pytest.raises(UndecodableFile, match=rf"\(byte {CHUNK_BYTES - 1}, line 1\)"):
        streamed(tmp_path, data, "split.txt")
    data = b"a\n" * 10 + b"\xe2\x82"  # truncated 3-byte sequence at the end
    with pytest.raises(UndecodableFile, match=r"\(byte 20, line 11\)"):
        streamed(tmp_path, data, "truncated.txt")


@pytest.mark.timeout(20)
def test_huge_sparse_binary_file_is_rejected_from_its_first_bytes(tmp_path: Path) -> None:
    # 64 GiB of zeros (sparse): reading it would take minutes, sniffing takes microseconds
    root = tmp_path / "repo"
    root.mkdir()
    with (root / "disk.img").open("wb") as fh:
        fh.truncate(64 << 30)
    store = DirectoryStore(root, ValidationConfig(max_file_bytes=1000))
    with pytest.raises(BinaryFile, match=r"^Binary file: disk\.img$"):
        store.read("disk.img")


@pytest.mark.timeout(120)
def test_large_text_file_is_indexed_in_little_memory(tmp_path: Path) -> None:
    """A 400 MB text file: one streamed pass, peak RSS far below the file size."""
    root = tmp_path / "repo"
    root.mkdir()
    size = 400 << 20
    with (root / "big.log").open("wb") as fh:
        fh.write(b"first line\nsecond line\n" + b"pad " * 4096 + b"\n")  # > 8 KiB sniff window
        fh.truncate(size - 10)  # a hole of NULs: valid UTF-8 past the sniff window
        fh.seek(size - 10)
        fh.write(b"\nlast line")
    script = textwrap.dedent(
        f"""
        import resource
        from pathlib import Path
        from citecal.source import DirectoryStore
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        store = DirectoryStore(Path({str(root)!r}))
        f = store.read("big.log")
        assert store.read("big.log") is f
        print(f.line_count, repr(f.lines(1, 2)), repr(f.lines(f.line_count, f.line_count)))
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print((after - before) // 1024)
        """
    )
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    summary, grown_mb = res.stdout.splitlines()
    assert summary == "5 'first line\\nsecond line' 'last line'"
    assert int(grown_mb) < 64, f"peak RSS grew by {grown_mb} MB reading a 400 MB file"


_line = st.text(alphabet=st.sampled_from(["a", "é", "日", "🙂", " ", "\t", "\r", "x"]), max_size=12)


@st.composite
def _documents(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(_line, max_size=12))
    endings = [draw(st.sampled_from(["\n", "\r\n"])) for _ in lines]
    text = "".join(line + end for line, end in zip(lines, endings, strict=True))
    if draw(st.booleans()):
        text += draw(_line)  # a last line without newline
    return (BOM if draw(st.booleans()) else b"") + text.encode()


def _reference(data: bytes) -> list[str]:
    text = data.removeprefix(BOM).decode()
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


@settings(max_examples=150, deadline=None)
@given(data=_documents(), chunk=st.integers(min_value=1, max_value=9))
def test_line_index_matches_a_reference_split(data: bytes, chunk: int) -> None:
    expected = _reference(data)
    f = mem(data)
    assert f.line_count == len(expected)
    for start in range(1, len(expected) + 1):
        for end in range(start, len(expected) + 1):
            assert f.lines(start, end) == "\n".join(expected[start - 1 : end])
    # the streamed index, with tiny chunks so that lines span many of them
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        mp.setattr(_files, "CHUNK_BYTES", chunk)
        root = Path(tmp)
        (root / "f.txt").write_bytes(data)
        big = DirectoryStore(root, ValidationConfig(max_file_bytes=1)).read("f.txt")
        if not data:  # an empty file is never "larger" than the limit
            return
        assert big.line_count == len(expected)
        for start in range(1, len(expected) + 1):
            assert big.lines(start, len(expected)) == "\n".join(expected[start - 1 :])
