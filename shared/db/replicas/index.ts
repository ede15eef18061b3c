/** Read replicas (docs/operations.md, "Read replicas"): the replica set, its health checks and read routing. */
export { onReplica, routedDatabase } from './routing.js';
export { openReadReplicas, type ReadReplicas, type Replica, type ReplicaState } from './replica-set.js';
