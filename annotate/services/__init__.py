"""Every write in annotate goes through a service here, named <entity>_<verb>."""
