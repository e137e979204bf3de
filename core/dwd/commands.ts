import type { ScalableDependent, WeederDependency } from './components.js';

/** Set the replicas of one control-plane Deployment in the shoot namespace on the seed. */
export interface ScaleCommand {
  action: 'scale';
  component: ScalableDependent;
  replicas: number;
}

/** Delete (and so restart) one pod in the shoot namespace on the seed. */
export interface RestartCommand {
  action: 'restart';
  pod: string;
  /** The dependency whose recovery triggered the restart, for the agent's log and the event. */
  dependency: WeederDependency;
}
