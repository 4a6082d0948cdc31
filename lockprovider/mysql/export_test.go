package mysql

// UseProcedureAcquire makes p acquire without a tick through the
// acquire_fast procedure, as it does on MySQL, which refuses the
// single-statement form.
func UseProcedureAcquire(p *Provider) { p.noReturning.Store(true) }
