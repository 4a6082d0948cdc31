package mysql

type opsQueries struct{}

func newOpsQueries(n names) opsQueries { return opsQueries{} }

type controlQueries struct{}

func newControlQueries(n names) controlQueries { return controlQueries{} }

type poller struct{}

func newPoller(p *Provider) *poller { return &poller{} }
