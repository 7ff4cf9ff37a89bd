// Types of the FirecREST v2 API, transcribed from the official OpenAPI document
// (../shared/data/firecrest/firecrest-v2-openapi-2.5.6.yaml, components.schemas). Only the parts
// Tandem uses; field names and optionality follow the spec.

export interface JobDescriptionModel {
  workingDirectory: string;
  name?: string | null;
  account?: string | null;
  partition?: string | null;
  reservation?: string | null;
  constraints?: string | null;
  script?: string;
  scriptPath?: string;
  env?: Record<string, string> | string[];
  standardInput?: string | null;
  standardOutput?: string | null;
  standardError?: string | null;
}

export interface PostJobSubmitRequest {
  job: JobDescriptionModel;
}

export interface PostJobSubmissionResponse {
  jobId?: string | null;
}

export interface JobStatus {
  state: string;
  stateReason?: string | null;
  exitCode?: number | null;
  interruptSignal?: number | null;
}

export interface JobTime {
  elapsed?: number | null;
  start?: number | null;
  end?: number | null;
  suspended?: number | null;
  limit?: number | null;
}

export interface JobTask {
  id: string;
  name: string;
  status: JobStatus;
  time: JobTime;
}

export interface JobModel {
  jobId: string;
  name: string;
  status: JobStatus;
  tasks?: JobTask[] | null;
  time: JobTime;
  account?: string | null;
  allocationNodes: number;
  cluster: string;
  group?: string | null;
  nodes: string;
  partition: string;
  priority?: number | null;
  killRequestUser?: string | null;
  user: string | null;
  workingDirectory: string;
}

export interface GetJobResponse {
  jobs?: JobModel[] | null;
}

export interface JobMetadataModel {
  jobId: string;
  script?: string | null;
  standardInput?: string | null;
  standardOutput?: string | null;
  standardError?: string | null;
}

export interface GetJobMetadataResponse {
  jobs?: JobMetadataModel[] | null;
}

export interface ApiResponseError {
  message: string;
  errorType?: string;
  data?: Record<string, unknown> | null;
  user?: string | null;
  causedBy?: string[] | null;
}

/** HPCCluster has many nested site-configuration fields; Tandem reads the name and health. */
export interface HPCCluster {
  name: string;
  servicesHealth?: { serviceType?: string; healthy?: boolean; message?: string | null }[] | null;
  [key: string]: unknown;
}

export interface GetSystemsResponse {
  systems: HPCCluster[];
}

export interface NodeModel {
  name: string;
  cpus: number;
  state: string[];
  sockets?: number | null;
  cores?: number | null;
  threads?: number | null;
  weight?: number | null;
  features?: string | string[] | null;
  partitions?: string[] | null;
  hostname?: string | null;
  address?: string | null;
  allocCpus?: number | null;
  idleCpus?: number | null;
  cpuLoad?: number | null;
  freeMemory?: number | null;
  allocMemory?: number | null;
}

export interface GetNodesResponse {
  nodes: NodeModel[];
}

export interface PartitionModel {
  name: string;
  partition: string | string[];
  cpus?: number | null;
  totalNodes?: number | null;
}

export interface GetPartitionsResponse {
  partitions: PartitionModel[];
}

export interface ReservationModel {
  name: string;
  nodeList: string;
  startTime: number;
  endTime: number;
  state?: string | null;
  features?: string | null;
}

export interface GetReservationsResponse {
  reservations: ReservationModel[];
}

export interface PosixIdentified {
  id: string;
  name: string;
}

export interface UserInfoResponse {
  user: PosixIdentified;
  group: PosixIdentified;
  groups: PosixIdentified[];
  accounts?: { name: string; [k: string]: unknown }[] | null;
}

export interface File {
  name: string;
  type: string;
  linkTarget?: string | null;
  user: string;
  group: string;
  permissions: string;
  lastModified: string;
  size: string;
}

export interface GetDirectoryLsResponse {
  output?: File[] | null;
}

export interface FileStat {
  mode: number;
  ino: number;
  dev: number;
  nlink: number;
  uid: number;
  gid: number;
  size: number;
  atime: number;
  ctime: number;
  mtime: number;
}

export interface GetFileStatResponse {
  output?: FileStat | null;
}

export interface FileChecksum {
  algorithm?: string;
  checksum: string;
}

export interface GetFileChecksumResponse {
  output?: FileChecksum | null;
}

export interface FileContent {
  content: string;
  contentType: 'lines' | 'bytes';
  startPosition: number;
  endPosition: number;
}

export interface GetFileHeadResponse {
  output?: FileContent | null;
}

export type GetFileTailResponse = GetFileHeadResponse;

export interface PostMakeDirRequest {
  /** The spec (2.5.6) names the new directory's path `sourcePath`. */
  sourcePath: string | null;
  parent?: boolean;
}

export interface PostMkdirResponse {
  output?: File | null;
}
