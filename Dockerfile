FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app
COPY pyproject.toml requirements.lock ./
COPY config config
COPY annotate annotate
COPY judges judges
COPY metrics metrics
COPY interchange interchange
RUN pip install -c requirements.lock .
COPY . .
EXPOSE 8000
