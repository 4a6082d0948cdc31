package testenv

import (
	"context"
	"fmt"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// dockerHealthy reports whether a Docker engine answers, without pulling
// anything.
func dockerHealthy(ctx context.Context) error {
	p, err := testcontainers.NewDockerProvider()
	if err != nil {
		return err
	}
	defer p.Close()
	return p.Health(ctx)
}

func redisContainer() (string, func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := dockerHealthy(ctx); err != nil {
		return "", nil, err
	}
	c, err := testcontainers.Run(ctx, "redis:7-alpine",
		testcontainers.WithExposedPorts("6379/tcp"),
		testcontainers.WithWaitStrategy(wait.ForListeningPort("6379/tcp")))
	if err != nil {
		return "", nil, err
	}
	ep, err := c.PortEndpoint(ctx, "6379/tcp", "redis")
	if err != nil {
		_ = c.Terminate(context.Background())
		return "", nil, err
	}
	return ep + "/0", func() { _ = c.Terminate(context.Background()) }, nil
}

func postgresContainer() (string, func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := dockerHealthy(ctx); err != nil {
		return "", nil, err
	}
	c, err := testcontainers.Run(ctx, "postgres:15-alpine",
		testcontainers.WithExposedPorts("5432/tcp"),
		testcontainers.WithEnv(map[string]string{"POSTGRES_HOST_AUTH_METHOD": "trust"}),
		testcontainers.WithWaitStrategy(wait.ForLog("database system is ready to accept connections").WithOccurrence(2)))
	if err != nil {
		return "", nil, err
	}
	ep, err := c.PortEndpoint(ctx, "5432/tcp", "")
	if err != nil {
		_ = c.Terminate(context.Background())
		return "", nil, err
	}
	return fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable", ep), func() { _ = c.Terminate(context.Background()) }, nil
}
