import { ConflictError, DomainError } from '../errors.js';
import type { MigrationAdmission } from '../migration/migration-admission.js';
import type { MigrationRecord } from '../migration/record.js';
import type { MigrationAction } from './plan.js';
import type { EvacuationMover, MoveOutcome } from './round.js';

/**
 * Moves through the same admission as `POST .../migrate` (one migration per shoot, the destination's
 * health and capacity checked again at the moment of the start): mode bad to the chosen seed, or a
 * resume. A shoot whose last migration ended in Error can only be resumed (to that migration's
 * destination); a shoot whose migration runs already keeps it: the evacuation adopts its id.
 */
export class AdmissionMover implements EvacuationMover {
  constructor(private readonly admission: Pick<MigrationAdmission, 'start'>) {}

  async move(action: MigrationAction): Promise<MoveOutcome> {
    const body =
      action.action === 'resume'
        ? {}
        : {
            destinationSeed: action.destination,
            mode: 'bad' as const,
            ...(action.finalSnapshotWait ? { finalSnapshotWait: action.finalSnapshotWait } : {}),
          };
    try {
      return { started: (await this.admission.start(action.project, action.name, body)).migrationId };
    } catch (error) {
      if (error instanceof ConflictError && error.code === 'MigrationDestinationMismatch') return this.resume(action);
      if (error instanceof ConflictError && error.code === 'MigrationInProgress')
        return { started: (error.current as MigrationRecord).id };
      if (error instanceof DomainError) return { rejected: `${error.code}: ${error.message}` };
      throw error;
    }
  }

  private async resume(action: MigrationAction): Promise<MoveOutcome> {
    try {
      return { started: (await this.admission.start(action.project, action.name, {})).migrationId };
    } catch (error) {
      if (error instanceof DomainError) return { rejected: `${error.code}: ${error.message}` };
      throw error;
    }
  }
}
