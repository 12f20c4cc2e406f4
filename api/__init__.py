"""FaithAudit's JSON API for pipelines and CI (`/api/v1/`, the schema at `/api/v1/openapi.json`).

Built on django-ninja rather than Django REST framework + drf-spectacular because:
- the request and response shapes are pydantic models, and the OpenAPI 3 schema is generated
  from the same type hints that validate the request, so the schema cannot drift from the
  code (drf-spectacular infers it from serializers and needs hand annotations for anything a
  plain ModelSerializer does not describe — most of ours: reports, problem documents, counts);
- a route is a plain function calling our services and selectors, as our views do; DRF's
  viewsets, routers and its own permission and throttling layers would be a second place
  where permissions live, which the issue rules out;
- the wheel ships swagger-ui and redoc as static files, so the docs page is served from our
  own static files (no CDN) under the existing CSP;
- it is one small dependency (pydantic is already installed for openai).

The floor: `api` sits above `interchange` and below `config` (config's URL conf mounts it). It
calls the same services and selectors as the screens: answers go through
`interchange.services.imports.answers_import`, roles through
`annotate.selectors.project_get_for_user`, labels through `annotate.services.labels`, judge
runs through `judges.services`, figures through `metrics.services`.

Modules: `models` (tokens), `tokens` (create, revoke, authenticate), `ratelimit`, `problems`
(RFC 9457 error documents), `schemas`, `routes/` (the NinjaAPI and its operations, one module
per resource), `selectors` (the reads of those operations that no app's selectors give),
`otlp` (OpenTelemetry trace ingestion), `views` (the account page for tokens), `urls`.
"""
