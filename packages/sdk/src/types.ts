// The admin API's bodies, by the names the service's OpenAPI document gives them: the generated
// file is made from that document, which is built from the schemas the handlers validate with.
import type { components } from './generated/openapi.js';

type Schemas = components['schemas'];

export type PointsEditBody = Schemas['PointsEditBody'];
export type MedalGiveBody = Schemas['MedalGiveBody'];
export type MedalRemoveBody = Schemas['MedalRemoveBody'];
export type ItemsQueryBody = Schemas['ItemsQueryBody'];
export type ItemsEditBody = Schemas['ItemsEditBody'];
export type VipSubmitBody = Schemas['VipSubmitBody'];
export type VipBatchBody = Schemas['VipBatchBody'];
export type MessagePushBody = Schemas['MessagePushBody'];

export type SuccessBody = Schemas['SuccessBody'];
export type OperationAnswer = Schemas['OperationAnswer'];
export type PushAnswer = Schemas['PushAnswer'];
export type ItemsBody = Schemas['ItemsBody'];
export type LivenessBody = Schemas['LivenessBody'];
export type VipRecord = Schemas['VipRecord'];
export type VipListBody = Schemas['VipListBody'];
export type VipSubmitAnswer = Schemas['VipSubmitAnswer'];
export type VipBatchAnswer = Schemas['VipBatchAnswer'];
export type UserGetAnswer = Schemas['UserGetAnswer'];
export type ClientNotFoundBody = Schemas['ClientNotFoundBody'];
export type PointsAuditPage = Schemas['PointsAuditPage'];
export type VipAuditPage = Schemas['VipAuditPage'];
export type MedalAuditPage = Schemas['MedalAuditPage'];
export type ItemsAuditPage = Schemas['ItemsAuditPage'];
export type ResolveBody = Schemas['ResolveBody'];
export type ResolveAnswer = Schemas['ResolveAnswer'];
export type OperationEntry = Schemas['OperationEntry'];
export type OperationListAnswer = Schemas['OperationListAnswer'];
export type PresenceEntry = Schemas['PresenceEntry'];
export type PresencePage = Schemas['PresencePage'];
export type PresenceAnswer = Schemas['PresenceAnswer'];
export type ErrorBody = Schemas['ErrorBody'];

export type { components, paths } from './generated/openapi.js';
