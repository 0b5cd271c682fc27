# community-bridge container image: the compiled service and its operator CLI, production
# dependencies only. Build: docker build -t community-bridge .
# No Docker engine runs on the development machines: test/ops/image.e2e.spec.ts reproduces these
# steps without one (the build stage's COPY and RUN lines, then CMD, HEALTHCHECK and the CLI).
FROM node:20-bookworm-slim AS build
# better-sqlite3 falls back to compiling from source when no prebuilt binary fits.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# Manifests first, so the install layer is reused while only sources change. Workspace packages'
# package.json files belong here too: npm ci needs every manifest the lock file names.
COPY package.json package-lock.json ./
# The workspace packages: npm ci links them and its prepare step builds the SDK.
COPY packages ./packages
RUN npm ci --no-fund --no-audit
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev --no-fund --no-audit

FROM node:20-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8090 DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8090
# Ready, not merely alive: the store answers and the read models have caught up with it.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 CMD ["node", "dist/healthcheck.js"]
# The operator CLI in a running container: docker compose exec community-bridge node dist/cli/main.js --help
CMD ["node", "dist/main.js"]
