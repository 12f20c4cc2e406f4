"""Every write of the interchange goes through a service here, named <entity>_<verb>."""
