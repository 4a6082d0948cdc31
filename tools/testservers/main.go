// Command testservers runs a command (the test suite) against Redis and
// PostgreSQL in Docker containers, for contributors who have a Docker
// engine but not the server binaries. It starts the containers with
// testcontainers-go, runs the command with TEST_REDIS_URL and
// TEST_DATABASE_URL set to them, removes the containers and exits with the
// command's status:
//
//	go run . -- make test
//
// It is a module of its own so that no module that uses baton, nor baton's
// own tests, download testcontainers-go and the Docker client.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

func main() {
	redisImage := flag.String("redis", "redis:7-alpine", "Redis image")
	pgImage := flag.String("postgres", "postgres:15-alpine", "PostgreSQL image")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: testservers [flags] -- command [args...]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	code, err := run(*redisImage, *pgImage, flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "testservers:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func run(redisImage, pgImage string, command []string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	redisURL, stopRedis, err := startRedis(ctx, redisImage)
	if err != nil {
		return 0, fmt.Errorf("redis container (is a Docker engine running?): %w", err)
	}
	defer stopRedis()
	pgURL, stopPG, err := startPostgres(ctx, pgImage)
	if err != nil {
		return 0, fmt.Errorf("postgres container: %w", err)
	}
	defer stopPG()
	fmt.Fprintf(os.Stderr, "testservers: TEST_REDIS_URL=%s TEST_DATABASE_URL=%s\n", redisURL, pgURL)

	cmd := exec.Command(command[0], command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "TEST_REDIS_URL="+redisURL, "TEST_DATABASE_URL="+pgURL)
	// The command gets an interrupt too (same process group); waiting for
	// it lets the deferred functions remove the containers.
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM)
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), nil
	}
	return 0, err
}

func startRedis(ctx context.Context, image string) (string, func(), error) {
	c, err := testcontainers.Run(ctx, image,
		testcontainers.WithExposedPorts("6379/tcp"),
		testcontainers.WithWaitStrategy(wait.ForListeningPort("6379/tcp")))
	if err != nil {
		return "", nil, err
	}
	stop := func() { _ = c.Terminate(context.Background()) }
	ep, err := c.PortEndpoint(ctx, "6379/tcp", "redis")
	if err != nil {
		stop()
		return "", nil, err
	}
	return ep + "/0", stop, nil
}

func startPostgres(ctx context.Context, image string) (string, func(), error) {
	c, err := testcontainers.Run(ctx, image,
		testcontainers.WithExposedPorts("5432/tcp"),
		testcontainers.WithEnv(map[string]string{"POSTGRES_HOST_AUTH_METHOD": "trust"}),
		// The entrypoint starts the server twice (initialisation, then for
		// real); the second "ready" is the one to wait for.
		testcontainers.WithWaitStrategy(wait.ForLog("database system is ready to accept connections").WithOccurrence(2)))
	if err != nil {
		return "", nil, err
	}
	stop := func() { _ = c.Terminate(context.Background()) }
	ep, err := c.PortEndpoint(ctx, "5432/tcp", "")
	if err != nil {
		stop()
		return "", nil, err
	}
	return fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable", ep), stop, nil
}
