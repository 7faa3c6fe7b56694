# fleetq: one image for every part of the control plane — `fleetq serve`, `fleetq worker`,
# `fleetq agent`, `fleetq demo` and the migrations (`npm run db:migrate`). The TypeScript sources
# run through tsx, as with `npm start`: no separate build step.
FROM node:20-bookworm-slim

WORKDIR /app
ENV NODE_ENV=production \
    NPM_CONFIG_UPDATE_NOTIFIER=false

# Dependencies first (cached while only sources change). postinstall runs `prisma generate`,
# which needs the schema, prisma.config.ts and the offline engine stub.
COPY package.json package-lock.json prisma.config.ts ./
COPY prisma ./prisma
COPY scripts ./scripts
RUN npm ci --no-audit --no-fund --include=dev && npm cache clean --force

COPY . .
# /var/lib/fleetq/tokens: the demo's token files (a named volume takes this owner when created).
RUN chown -R node:node /app && mkdir -p /var/lib/fleetq/tokens && chown -R node:node /var/lib/fleetq
USER node

EXPOSE 4000 9464
ENTRYPOINT ["node", "bin/fleetq.mjs"]
CMD ["serve"]
