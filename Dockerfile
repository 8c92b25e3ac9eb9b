# One image for both processes: the API (default CMD) and the Temporal worker
# (docker-compose.yml overrides the command). TypeScript runs through tsx, a
# runtime dependency, so there is no build step and `npm ci --omit=dev` is enough.
FROM node:20-bookworm-slim

ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    XDG_CACHE_HOME=/home/node/.cache \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_AUDIT=false

WORKDIR /app

# Dependencies first, so a source change does not reinstall them.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force

COPY tsconfig.json ./
COPY shared ./shared
COPY workflows ./workflows
COPY activities ./activities
COPY worker ./worker
COPY api ./api
COPY scripts ./scripts

# The sources stay root-owned (read-only to the app); only the cache directory,
# where the worker keeps its workflow bundle, belongs to the runtime user.
RUN mkdir -p "$XDG_CACHE_HOME" && chown -R node:node "$XDG_CACHE_HOME"

# The image's unprivileged `node` user (uid 1000).
USER node

# Build the workflow bundle now, into the cache, so a worker starts without
# running webpack (the bundle is keyed by the sources and the SDK version).
RUN node_modules/.bin/tsx -e "require('./worker/bundle').workflowBundle().then(() => console.log('workflow bundle cached'))"

EXPOSE 3000

CMD ["node_modules/.bin/tsx", "api/server.ts"]
