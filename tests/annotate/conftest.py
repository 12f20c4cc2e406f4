import pytest


@pytest.fixture
def media_root(settings, tmp_path):
    """MEDIA_ROOT of this test alone (the session-wide one is shared by every test): what an
    import test finds under imports/ is what it wrote."""
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT
