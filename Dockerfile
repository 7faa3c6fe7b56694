# fleetq: one image for every part of the control plane — `fleetq serve`, `fleetq worker`,
# `fleetq agent`, `fleetq demo` and `fleetq migrate`. Two stages: the first compiles the
# TypeScript (dev dependencies), the second carries the compiled code and production
# dependencies only.
FROM node:20-bookworm-slim AS build
WORKDIR /app
ENV NPM_CONFIG_UPDATE_NOTIFIER=false
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY prisma.config.ts tsconfig.json tsconfig.build.json schema.graphql ./
COPY prisma ./prisma
COPY scripts ./scripts
COPY src ./src
COPY workers ./workers
RUN npx prisma generate && npm run build

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production \
    NPM_CONFIG_UPDATE_NOTIFIER=false
COPY package.json package-lock.json ./
# --omit=optional too: npm counts a devDependency that a production package names as an optional
# peer (prisma and typescript, for @prisma/client) as "dev or optional", and --omit=dev alone
# installs it — the Prisma CLI, its studio and TypeScript, half the size of node_modules. The other optional
# packages are native speed-ups and other platforms' builds the code does without (msgpackr-extract,
# pg-cloudflare). test/deploy/image.test.ts replays this stage and checks what it installs.
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY prisma ./prisma
COPY schema.graphql ./
COPY examples ./examples
# /var/lib/fleetq/tokens: the demo's token files (a named volume takes this owner when created).
RUN mkdir -p /var/lib/fleetq/tokens && chown -R node:node /var/lib/fleetq
USER node

EXPOSE 4000 9464
ENTRYPOINT ["node", "bin/fleetq.mjs"]
CMD ["serve"]
