import type { CommunityPlatform } from '../community/port.js';
import type { ApiKeysReadModel } from '../projections/apiKeys.js';
import type { ItemsReadModel, MedalsReadModel } from '../projections/itemsAndMedals.js';
import type { OperationsReadModel } from '../projections/operations.js';
import type { ProjectionRunner } from '../projections/runner.js';
import type { UsersReadModel } from '../projections/users.js';
import type { VipReadModel } from '../projections/vip.js';
import type { VipHistoryReadModel } from '../projections/vipHistory.js';
import type { PlatformOperations } from '../services/platformOperations.js';
import type { Clock } from '../services/runtime.js';
import type { UserSync } from '../services/userSync.js';
import type { EventStore } from '../store/port.js';

export interface ReadModels {
  apiKeys: ApiKeysReadModel;
  users: UsersReadModel;
  vip: VipReadModel;
  vipHistory: VipHistoryReadModel;
  operations: OperationsReadModel;
  items: ItemsReadModel;
  medals: MedalsReadModel;
}

/** Everything the HTTP layer uses, built once by the composition root (src/main.ts). */
export interface HttpDeps {
  store: EventStore;
  runner: ProjectionRunner;
  readModels: ReadModels;
  platform: CommunityPlatform;
  userSync: UserSync;
  operations: PlatformOperations;
  clock: Clock;
}
