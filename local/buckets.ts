import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { awsErrorName } from '../adapters/aws-errors.js';
import { emulatorCredentials, LOCAL_REGION } from './aws-env.js';

/** An S3 client of the emulator (path-style: bucket host names do not resolve there). */
export function emulatorS3(endpoint: string, region = LOCAL_REGION): S3Client {
  return new S3Client({ endpoint, region, forcePathStyle: true, credentials: emulatorCredentials() });
}

/** Creates the bucket unless it is there already (a landscape or a test started again). */
export async function ensureBucket(s3: S3Client, bucket: string): Promise<void> {
  try {
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (error) {
    if (awsErrorName(error) !== 'BucketAlreadyOwnedByYou') throw error;
  }
}
