/**
 * Leader leases: an election is a lease that each instance campaigns for continuously and holds while it is up.
 * At most one instance leads an election at a time, as far as its backend can tell, and each term has a fresh
 * fencing token on fenced backends. Work that must run only on the leader is annotated {@link
 * dev.lease.leader.LeaderOnly}; it runs with the term's lease bound to its thread and is interrupted the moment
 * leadership is lost. {@link dev.lease.leader.LeaderElections} gives programmatic access, and
 * {@link dev.lease.leader.LeadershipGrantedEvent} and {@link dev.lease.leader.LeadershipRevokedEvent} tell
 * listeners when a term starts and ends.
 *
 * <p>A leader cannot know it still leads at the instant it acts: like any lease, a term can end while the leader
 * is paused. Writes that must not come from a former leader carry the term's token to a fenced resource.
 */
package dev.lease.leader;
