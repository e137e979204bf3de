import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  UploadPartCopyCommand,
  type AbortMultipartUploadCommandInput,
  type AbortMultipartUploadCommandOutput,
  type CompleteMultipartUploadCommandInput,
  type CompleteMultipartUploadCommandOutput,
  type CopyObjectCommandInput,
  type CopyObjectCommandOutput,
  type CreateMultipartUploadCommandInput,
  type CreateMultipartUploadCommandOutput,
  type DeleteObjectCommandInput,
  type DeleteObjectCommandOutput,
  type GetObjectCommandInput,
  type GetObjectCommandOutput,
  type HeadBucketCommandInput,
  type HeadBucketCommandOutput,
  type HeadObjectCommandInput,
  type HeadObjectCommandOutput,
  type ListObjectsV2CommandInput,
  type ListObjectsV2CommandOutput,
  type PutObjectCommandInput,
  type PutObjectCommandOutput,
  type S3Client,
  type UploadPartCopyCommandInput,
  type UploadPartCopyCommandOutput,
} from '@aws-sdk/client-s3';

/**
 * Every S3 call the snapshot store makes, and nothing else (etcd-backup-restore's narrow S3 interface).
 * The IAM policy of a function that uses the store follows from this list; unit tests fake it.
 */
export interface S3Api {
  listObjectsV2(input: ListObjectsV2CommandInput): Promise<ListObjectsV2CommandOutput>;
  getObject(input: GetObjectCommandInput): Promise<GetObjectCommandOutput>;
  putObject(input: PutObjectCommandInput): Promise<PutObjectCommandOutput>;
  headObject(input: HeadObjectCommandInput): Promise<HeadObjectCommandOutput>;
  headBucket(input: HeadBucketCommandInput): Promise<HeadBucketCommandOutput>;
  deleteObject(input: DeleteObjectCommandInput): Promise<DeleteObjectCommandOutput>;
  copyObject(input: CopyObjectCommandInput): Promise<CopyObjectCommandOutput>;
  createMultipartUpload(input: CreateMultipartUploadCommandInput): Promise<CreateMultipartUploadCommandOutput>;
  uploadPartCopy(input: UploadPartCopyCommandInput): Promise<UploadPartCopyCommandOutput>;
  completeMultipartUpload(input: CompleteMultipartUploadCommandInput): Promise<CompleteMultipartUploadCommandOutput>;
  abortMultipartUpload(input: AbortMultipartUploadCommandInput): Promise<AbortMultipartUploadCommandOutput>;
}

/** The narrow interface on top of a real client. */
export function s3Api(client: S3Client): S3Api {
  return {
    listObjectsV2: (input) => client.send(new ListObjectsV2Command(input)),
    getObject: (input) => client.send(new GetObjectCommand(input)),
    putObject: (input) => client.send(new PutObjectCommand(input)),
    headObject: (input) => client.send(new HeadObjectCommand(input)),
    headBucket: (input) => client.send(new HeadBucketCommand(input)),
    deleteObject: (input) => client.send(new DeleteObjectCommand(input)),
    copyObject: (input) => client.send(new CopyObjectCommand(input)),
    createMultipartUpload: (input) => client.send(new CreateMultipartUploadCommand(input)),
    uploadPartCopy: (input) => client.send(new UploadPartCopyCommand(input)),
    completeMultipartUpload: (input) => client.send(new CompleteMultipartUploadCommand(input)),
    abortMultipartUpload: (input) => client.send(new AbortMultipartUploadCommand(input)),
  };
}
