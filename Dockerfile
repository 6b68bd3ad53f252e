# syntax=docker/dockerfile:1
# payouts for unattended (cron) runs. How to build and run it, and a Kubernetes CronJob:
# docs/container.md. Build: docker build -t payouts .
#
# Node 24 is the LTS line CI also tests (.ci/run); package.json asks for >= 20.19.
ARG NODE_VERSION=24

# ---- build: every dependency, TypeScript compiled to dist/ ------------------------------------
FROM node:${NODE_VERSION}-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: building needs no install script (the one of embedded-postgres, a dev
# dependency, only serves the tests). The build is its own step below, so a change to src/
# does not reinstall the dependencies.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# ---- runtime: production dependencies and dist/ only ------------------------------------------
FROM node:${NODE_VERSION}-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# No production dependency has an install script: --ignore-scripts. dist/ comes from the
# build stage.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && npm cache clean --force
COPY --from=build /app/dist ./dist
# Sheets, results files and the register (PAYOUTS_REGISTER=/data/state/register.db, or a
# postgres:// URL) live on a volume mounted at /data (relative paths resolve there). The code stays root-owned and read-only to the process, which runs as
# the unprivileged `node` user of the base image, given by number so that Kubernetes'
# runAsNonRoot can check it.
RUN mkdir /data && chown node:node /data
WORKDIR /data
USER 1000:1000
# Exec form, no shell in between: the exit code of payouts (0 to 6, and 70 for a bug in
# payouts; the table is in docs/container.md) is the container's. Node is then PID 1, which gets no default signal actions: `payouts run` and
# `payouts sandbox` handle SIGTERM/SIGINT themselves, for the other commands run with
# `docker run --init` (docs/container.md).
ENTRYPOINT ["node", "/app/dist/cli/main.js"]
CMD ["--help"]
