"""The knowledge base and test-set pages, one module per concept, each with its own
`urlpatterns` that testsets/urls.py composes (as annotate/urls.py does)."""
