package coordinator

import (
	"github.com/rdmamesh/rdmamesh/coordinator/linkplan"
)

// logLinkPlan tells the operator what a link sweep's plan covers and what
// of the topology and the workers it left out.
func (c *Coordinator) logLinkPlan(lp *linkplan.Plan) {
	for _, u := range lp.Unmatched {
		c.log.Warn("link sweep: topology and workers disagree; planned on what matches", "what", u)
	}
	for _, pc := range lp.Planes {
		c.log.Info("link sweep plan", "rail", pc.Rail, "links", pc.Links, "covered", pc.Covered, "tests", pc.Tests,
			"min_tests_a_link", pc.MinTests, "max_tests_a_link", pc.MaxTests, "uncovered", len(pc.Uncovered))
		for _, u := range pc.Uncovered {
			c.log.Warn("link sweep: a link the plan cannot cover", "rail", pc.Rail, "link", u.Link, "tests", u.Tests, "why", u.Why)
		}
	}
}
