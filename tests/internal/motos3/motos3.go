// Package motos3 runs moto's S3 (https://github.com/getmoto/moto, moto_server) on loopback, a second S3 besides
// s3stub that this project did not write: it applies the PutObject reference to the letter (an upload to a bucket with
// Object Lock names its checksum algorithm or carries Content-MD5), honours If-None-Match: * (412), keeps Object Lock
// retention and versions, and lists buckets by prefix. It evaluates no bucket policy: the IAM matrix and s3stub judge
// the archive's.
//
// moto 5.2.1 ships with this kind of machine (pip list); Start fails naming how to get it, never skips.
package motos3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Server is a running moto_server.
type Server struct {
	URL string
	cmd *exec.Cmd
}

// Start runs moto_server on a free loopback port and waits until it answers.
func Start(ctx context.Context) (*Server, error) {
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		return nil, errors.New("moto_server is not in PATH: the archive's end-to-end test runs against moto's S3 too; " +
			"install it with pip install 'moto[server]==5.2.1' (this kind of machine ships it)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", fmt.Sprint(port))
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard // it logs every request
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting moto_server: %w", err)
	}
	s := &Server{URL: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(s.URL + "/moto-api/")
		if err == nil {
			_ = resp.Body.Close()
			return s, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.Close()
			return nil, fmt.Errorf("moto_server did not answer on %s: %w", s.URL, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Close stops it.
func (s *Server) Close() {
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
}

// Client is an S3 client of the AWS SDK pointed at moto, path-style (its region us-east-1).
func (s *Server) Client() *s3.Client {
	return s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(s.URL), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider("moto", "moto", "")})
}

// CreateArchive creates bucket as the stack declares the archive: Object Lock, whose default retention is mode for
// days (versioning comes with it).
func (s *Server) CreateArchive(ctx context.Context, bucket, mode string, days int32) error {
	c := s.Client()
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket), ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		return fmt.Errorf("creating %s in moto: %w", bucket, err)
	}
	_, err := c.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: aws.String(bucket),
		ObjectLockConfiguration: &types.ObjectLockConfiguration{ObjectLockEnabled: types.ObjectLockEnabledEnabled,
			Rule: &types.ObjectLockRule{DefaultRetention: &types.DefaultRetention{Mode: types.ObjectLockRetentionMode(mode), Days: aws.Int32(days)}}}})
	if err != nil {
		return fmt.Errorf("locking %s in moto: %w", bucket, err)
	}
	return nil
}

// Keys are the keys of bucket's objects, sorted (S3 lists them in order).
func (s *Server) Keys(ctx context.Context, bucket string) ([]string, error) {
	var keys []string
	pages := s3.NewListObjectsV2Paginator(s.Client(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	return keys, nil
}
