"""Refuse form posts declared in a charset other than UTF-8, with a plain 400.

Django decodes form fields with the charset the request declares: a UTF-16 body then fails
deep in request.POST (UnicodeDecodeError, a 500), and an unknown charset is silently read as
UTF-8. Every page of ours is UTF-8 and browsers post forms in the page's charset, so anything
else is a client we cannot read: it is told so before any view or CSRF check reads the body.
"""

import codecs

from django.http import HttpResponse

FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
READABLE = {"utf-8", "ascii"}  # codec names; ASCII is a subset of UTF-8

MESSAGE = (
    "This form was sent in the {charset!r} character set. FaithAudit reads forms in UTF-8 "
    "only: send the request with charset=utf-8 (or no charset).\n"
)


def charset_readable(charset: str) -> bool:
    try:
        return codecs.lookup(charset).name in READABLE
    except (LookupError, ValueError):  # ValueError: a NUL in the name
        return False


class RequestCharsetMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.content_type in FORM_TYPES:
            charset = request.content_params.get("charset", "").strip().strip('"')
            if charset and not charset_readable(charset):
                return HttpResponse(
                    MESSAGE.format(charset=charset[:40]),
                    status=400,
                    content_type="text/plain; charset=utf-8",
                )
            if charset:
                request.encoding = "utf-8"
        return self.get_response(request)
