// Read models' records in the console's answer shapes.
import type { OperationView } from '../../contract/console.js';
import type { OperationRecord } from '../../projections/operations.js';

export function operationView(record: OperationRecord): OperationView {
  const {
    operationId,
    position,
    kind,
    oId,
    userName,
    request,
    requestedAt,
    appId,
    keyId,
    node,
    claim,
    idempotencyKey,
    requestId,
    status,
    outcome,
    unknownReason,
    resolution,
    answeredAfterResolution,
  } = record;
  return {
    operationId,
    position,
    kind,
    oId,
    userName,
    request: { ...request },
    requestedAt,
    appId,
    keyId,
    status,
    ...(node !== undefined && { node }),
    ...(claim !== undefined && { claim }),
    ...(idempotencyKey !== undefined && { idempotencyKey }),
    ...(requestId !== undefined && { requestId }),
    ...(outcome !== undefined && { outcome }),
    ...(unknownReason !== undefined && { unknownReason }),
    ...(resolution !== undefined && { resolution: { ...resolution, by: { ...resolution.by } } }),
    ...(answeredAfterResolution !== undefined && { answeredAfterResolution: { ...answeredAfterResolution } }),
  };
}
