"""Request bodies read as import files (the answers, preferences and traces imports read a
named binary file), and an import's issues as a problem's `errors`."""

import io
import re


class Rewindable(io.RawIOBase):
    """The request body as a binary stream read once, front to back; the import's format
    sniffing (read the head, seek back to 0) is served from the first bytes kept aside."""

    HEAD = 64 * 1024

    def __init__(self, stream):
        self.stream = stream
        self.head = stream.read(self.HEAD) or b""
        self.position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = 0) -> int:
        if whence != 0 or offset > len(self.head) or self.position > len(self.head):
            raise OSError("the request body can only be rewound to its first bytes")
        self.position = offset
        return offset

    def readinto(self, buffer) -> int:
        if self.position < len(self.head):
            data = self.head[self.position : self.position + len(buffer)]
        else:
            data = self.stream.read(len(buffer)) or b""
        buffer[: len(data)] = data
        self.position += len(data)
        return len(data)


class Named:
    """A binary stream with a name, as `binary_source` expects of a file."""

    def __init__(self, handle, name: str):
        self.file = handle
        self.name = name


_LOCATION = re.compile(r"^(?:record (\d+)|line (\d+))")


def issue_out(issue) -> dict:
    """An import's issue as a problem's error: its field, detail and location, and the 0-based
    `index` of the item when the location names a record or line."""
    out = {"field": issue.field, "detail": issue.message, "location": issue.location}
    match = _LOCATION.match(issue.location)
    if match:
        out["index"] = int(match.group(1) or match.group(2)) - 1
    return out
