package dev.lease.faults.checker;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.stream.Collectors;

import dev.lease.faults.checker.History.Kind;
import dev.lease.faults.checker.History.Op;
import dev.lease.faults.checker.History.Outcome;

import dev.lease.faults.workload.LeaderWorker;

/**
 * Checks a history against what the fenced table finally holds. The properties:
 * <ol>
 *   <li>tokens granted to acknowledged holders are never granted twice and strictly increase in real-time order
 *       (a grant acknowledged before another was requested has the lower token);</li>
 *   <li>the table accepted writes in non-decreasing token order; each acceptance below the highest token already
 *       accepted is a <em>stale write accepted</em>;</li>
 *   <li>every acknowledged write is in the table (nothing acknowledged is lost);</li>
 *   <li>with fence at grant only: no write is a <em>stale write accepted after a successor's grant</em> (below);</li>
 *   <li>the history and the table reconcile (below);</li>
 *   <li>every section whose lease the store lost while the section held it was told: interrupted in that section,
 *       or ended with the lease lost (LeaseLostException, a RELEASE FAIL); never a normal RELEASE OK invoked after
 *       the loss (below);</li>
 *   <li>a section stops at its interrupt: no WRITE of it is invoked after its first interrupt, except a forced one,
 *       which must not be accepted after a successor's write (below);</li>
 *   <li>with tokens: sections never overlap at the resource. In the table's commit order the rows of one section
 *       form one block: no row of a section comes after a row of another section that followed the first one's
 *       rows. The table's order is the resource's own, so this needs no clock; with unique tokens and a fence that
 *       compares it follows from properties 1 and 2, but it is stated per section, so it still holds, and names the
 *       two sections, when what broke is the tokens;</li>
 *   <li>for a history {@linkplain History#ofTerms() of election terms}: every term ended (RELEASE) before its
 *       worker's next term and by the end of the run.</li>
 * </ol>
 * A fence alone only orders writes, so property 2 says nothing of a stale write that lands after a successor was
 * granted but before it wrote: the table then holds the tokens in order. Such a write is counted on its own: a row
 * of the table with token t whose write was <em>invoked</em> after a grant of a token t' > t was acknowledged (its
 * ACQUIRE completed OK). The table cannot say when it accepted a row, only that it happened between the write's
 * invocation and its completion; taking the invocation makes the count conservative: a write concurrent with the
 * grant may really have committed before it and is not counted. Acknowledged means returned to the worker: with
 * fence at grant the engine commits the fence before it hands the lease over, so every such row is a failure;
 * without it the number is information (the window the fence leaves open), not a failure.
 * For EFFICIENCY leases (no tokens) only overlaps of holders are counted, as information.
 * The other order is counted too ({@link #staleWritesRefusedAfterWrite}): a <em>stale write after a successor's
 * write</em> is a write the fence refused that was <em>invoked</em> after a write with a higher token had been
 * acknowledged (its WRITE completed OK). Every fence must refuse it, and it proves the fence compared: such a write
 * accepted is a stale write accepted (property 2).
 *
 * <p>Reconciliation: the properties above are only as good as the history, so the check also fails when the history
 * and the table disagree or the history is incomplete. Every row of the table must be the write of a known WRITE op
 * carrying the row's token, and not one the op saw refused. With tokens, every write must carry a token its own
 * worker was granted, and no token may be written by two workers: a grant missing from the history (a child's
 * events lost) could otherwise hide a duplicate token. Every refusal must be justified: the fence refuses only a
 * token below one it already took, so some higher token must have reached it before the refusal completed. The
 * table does not record when it accepted a row, only the history does, between the write's invocation and its
 * completion: a row with a higher token whose write was <em>invoked</em> before the refusal completed justifies it.
 * With fence at grant the fence also moves when a grant advances it, which happens between that acquire's
 * invocation and its completion (whatever its outcome: it may be lost right after), and the lease_fence table keeps
 * only the last value; so there an acquire of a higher token invoked before the refusal completed justifies it too.
 * This is necessary, not sufficient: an unjustified refusal proves a missing event or a fence that refuses too much,
 * a justified one proves nothing more. Finally nothing may be left PENDING, and whatever went wrong while the history
 * was recorded ({@link History#problems()}: garbled or truncated event streams, workers still alive) fails the run.
 *
 * <p>Sections (properties 6 and 7). A section is one grant of one worker, from its ACQUIRE OK to its RELEASE or its
 * interrupt; its writes and interrupts are the worker's until its next grant (see {@link History#sections}); an
 * interrupt that names a token no such section holds fails the run. The store lost a section's grant at the
 * acknowledgement of its successor's grant (the next token handed out, to another worker), or where the harness
 * recorded the loss itself ({@link History#storeLost}); a loss counts only while the section held the grant, i.e.
 * before its RELEASE OK was invoked when it had one. Property 6 fails a lost section that ended with a RELEASE OK
 * invoked after the loss (interrupted or not: it went on as if it held while the successor did), and one that was
 * neither interrupted nor ended lost. The engine promises this: its local deadline passes before the store can grant
 * the lease again, and it checks validity when the work returns. Property 7 fails a WRITE invoked after its section's
 * first interrupt (the holder saw it and wrote anyway: a section that swallows interrupts), unless the write is
 * {@linkplain History#forced forced}: the paused-holder scenarios freeze a holder right before its write and make it
 * write after its loss on purpose, deaf to interrupts, so that the fence is exercised. A forced write may be refused
 * or accepted (before the successor's first write only a fence at grant can refuse it), but a forced write accepted
 * although a write with a higher token had already been acknowledged when it was invoked fails the run. Sections that
 * the history shows neither a RELEASE nor an interrupt of (hand-made histories) are not judged by property 6: the
 * worker of the suite always records one or the other. Histories {@linkplain History#withoutEngine() without an
 * engine} (holders that call the backend straight, so no one interrupts them) are not judged by 6 and 7.
 *
 * <p>Leadership ({@link LeaderWorker}). A term of an election is a section: its grant an ACQUIRE (invoked when the
 * campaign started, completed when the granted event came), its end a RELEASE (OK when the instance gave it up while
 * it still held it, FAIL when it was told that it lost it), its writes WRITEs with the term's token. So the leadership
 * properties are the ones above: no two terms with the same token (1: per election, since a history is one lease
 * name), terms granted in token order in real time (1), no write of a stale term accepted after a newer term's write
 * (2, and forced writes in 7), no write of a stale term accepted after a newer term's grant when the terms advance the
 * fence at grant (4; without fence at grant counted, not failed: the fence alone cannot tell), a term the store lost
 * was told (6), its work stopped at the interrupt (7), terms never overlap at the resource (8), and each instance
 * holds one term at a time, every term ending (9). "Never overlap" cannot be stated on the holders' clocks: a frozen
 * leader believes it leads while its successor does, which is the case the fence exists for; what the resource saw is
 * what 2, 4 and 8 check.
 *
 * <p>Without tokens (EFFICIENCY: every token is 0), sections are told apart by worker and time, and the successor is
 * the next grant acknowledged. Property 7 holds as it is: stopping at an interrupt is the section's duty whatever the
 * backend. Property 6 is counted ({@link History#lossToInterrupt}), not failed: a store without tokens may lose a key
 * with no sign the holder can see first (a Redis restart without persistence, a failover), so a successor can be
 * granted while the holder's local validity still runs; EFFICIENCY accepts that rare duplicate.
 */
public final class HistoryChecker {

    /** One row of the fenced table, in the order the table accepted it. */
    public record Accepted(long seq, long token, long writeId) {
    }

    /** What a run showed. */
    public record Verdict(String scenario, int cycles, int grants, int writesAccepted, int writesRejected, int writesUnknown,
            int staleWritesAccepted, int staleWritesAfterGrant, int duplicateTokens, int grantsOutOfOrder,
            int acknowledgedWritesLost, int overlaps, int interleavedSections, List<String> problems) {

        public boolean safe() {
            return problems.isEmpty();
        }
    }

    private HistoryChecker() {
    }

    public static Verdict check(String scenario, History history, List<Accepted> table, boolean fenced) {
        return check(scenario, history, table, fenced, false);
    }

    /** @param fencedAtGrant whether the holders advanced the fence at grant: then a stale write after a grant fails */
    public static Verdict check(String scenario, History history, List<Accepted> table, boolean fenced,
            boolean fencedAtGrant) {
        List<Op> ops = history.ops();
        List<String> problems = new ArrayList<>();
        List<Op> grants = ops.stream().filter(o -> o.kind == Kind.ACQUIRE && o.ok()).toList();
        List<Op> writes = ops.stream().filter(o -> o.kind == Kind.WRITE).toList();

        int duplicates = 0;
        int outOfOrder = 0;
        if (fenced) {
            Set<Long> seen = new HashSet<>();
            for (Op grant : grants) {
                if (!seen.add(grant.token)) {
                    duplicates++;
                    problems.add("token " + grant.token + " granted twice (op " + grant.id + ")");
                }
            }
            outOfOrder = grantsOutOfRealTimeOrder(grants, problems);
        }

        int stale = 0;
        long highest = Long.MIN_VALUE;
        for (Accepted row : table) {
            if (row.token() < highest) {
                stale++;
                problems.add("stale write accepted: write " + row.writeId() + " with token " + row.token()
                        + " after the table had accepted token " + highest);
            }
            highest = Math.max(highest, row.token());
        }

        List<String> afterGrant = fenced ? staleWritesAfterGrant(grants, writes, table) : List.of();
        if (fencedAtGrant) {
            problems.addAll(afterGrant);
        }

        Set<Long> inTable = new HashSet<>();
        table.forEach(row -> inTable.add(row.writeId()));
        int lost = 0;
        for (Op write : writes) {
            if (write.ok() && !inTable.contains(write.id)) {
                lost++;
                problems.add("acknowledged write " + write.id + " (token " + write.token + ") is missing from the table");
            }
        }

        reconcile(ops, table, fenced, fencedAtGrant, problems);
        checkSections(history, table, fenced, problems);
        int interleaved = fenced ? interleavedSections(history, table, problems) : 0;
        if (history.terms()) {
            checkTerms(history, problems);
        }
        problems.addAll(history.problems());

        int overlaps = fenced ? 0 : countOverlaps(ops, history);
        int cycles = (int) ops.stream().filter(o -> o.kind == Kind.ACQUIRE).count();
        return new Verdict(scenario, cycles, grants.size(), (int) writes.stream().filter(Op::ok).count(),
                (int) writes.stream().filter(o -> o.outcome == Outcome.FAIL).count(),
                (int) writes.stream().filter(o -> o.outcome == Outcome.UNKNOWN).count(), stale,
                afterGrant.size(), duplicates, outOfOrder, lost, overlaps, interleaved, List.copyOf(problems));
    }

    /** Fails with the problems, after writing the whole history as JSON for a human to read. */
    public static void assertSafe(Verdict verdict, History history) {
        if (verdict.safe()) {
            return;
        }
        Path dump = Path.of("target", "fault-histories", verdict.scenario() + ".json");
        try {
            Files.createDirectories(dump.getParent());
            Files.writeString(dump, history.toJson());
        }
        catch (IOException ex) {
            throw new AssertionError("history check failed and the history could not be written: " + ex, ex);
        }
        throw new AssertionError(verdict.scenario() + ": " + verdict.problems().size() + " problem(s), history in "
                + dump.toAbsolutePath() + "\n  " + String.join("\n  ", verdict.problems().subList(0,
                        Math.min(20, verdict.problems().size()))));
    }

    private static void reconcile(List<Op> ops, List<Accepted> table, boolean fenced, boolean fencedAtGrant,
            List<String> problems) {
        Map<Long, Op> byId = ops.stream().collect(Collectors.toMap(o -> o.id, Function.identity()));
        for (Op op : ops) {
            if (op.outcome == Outcome.PENDING) {
                problems.add(op.kind + " " + op.id + " of worker " + op.worker + " never completed (PENDING at the end)");
            }
        }
        for (Accepted row : table) {
            Op op = byId.get(row.writeId());
            if (op == null || op.kind != Kind.WRITE) {
                problems.add("row " + row.seq() + " (token " + row.token() + ") is write " + row.writeId()
                        + ", which the history " + (op == null ? "does not know" : "knows as a " + op.kind));
            }
            else if (op.outcome == Outcome.FAIL) {
                problems.add("row " + row.seq() + " is write " + op.id + " (token " + row.token()
                        + "), which its worker saw refused");
            }
            else if (op.outcome != Outcome.PENDING && op.token != row.token()) {
                problems.add("row " + row.seq() + " holds token " + row.token() + " for write " + op.id
                        + ", which carried token " + op.token);
            }
        }
        if (!fenced) {
            return;
        }
        List<Op> writes = ops.stream().filter(o -> o.kind == Kind.WRITE && o.outcome != Outcome.PENDING).toList();
        Map<Long, Set<Integer>> writersOfToken = new TreeMap<>();
        for (Op write : writes) {
            boolean granted = ops.stream().anyMatch(o -> o.kind == Kind.ACQUIRE && o.ok() && o.worker == write.worker
                    && o.token == write.token);
            if (!granted) {
                problems.add("write " + write.id + " of worker " + write.worker + " carried token " + write.token
                        + ", which the history never granted to that worker");
            }
            writersOfToken.computeIfAbsent(write.token, t -> new TreeSet<>()).add(write.worker);
        }
        writersOfToken.forEach((token, workers) -> {
            if (workers.size() > 1) {
                problems.add("token " + token + " was written by workers " + workers + ": two grants of one token");
            }
        });
        for (Op refused : writes) {
            if (refused.outcome != Outcome.FAIL) {
                continue;
            }
            boolean byRow = table.stream().filter(row -> row.token() > refused.token).map(row -> byId.get(row.writeId()))
                    .anyMatch(w -> w != null && w.invokedAt - refused.completedAt < 0);
            boolean byGrant = fencedAtGrant && ops.stream().anyMatch(o -> o.kind == Kind.ACQUIRE
                    && o.token > refused.token && o.invokedAt - refused.completedAt < 0);
            if (!byRow && !byGrant) {
                problems.add("write " + refused.id + " with token " + refused.token + " was refused, but no higher "
                        + "token had reached the fence before" + (fencedAtGrant ? " (by a write or a grant)" : ""));
            }
        }
    }

    /** Properties 6 and 7 of the class comment. */
    private static void checkSections(History history, List<Accepted> table, boolean fenced, List<String> problems) {
        if (!history.throughEngine()) {
            return;
        }
        History.Sections sections = history.sections(fenced);
        problems.addAll(sections.problems());
        for (History.Section section : sections.all()) {
            Long interruptedAt = section.interruptedAt();
            if (fenced && section.judged() && section.lostAt() != null) {
                if (section.releasedNormally()) {
                    problems.add(section.describe() + " was released normally (RELEASE " + section.release().id
                            + " OK, invoked at " + section.release().invokedAt + ") after the store had lost it at "
                            + section.lostAt() + " (" + section.lostBy() + ")" + (interruptedAt == null
                                    ? ", never interrupted" : ", although interrupted at " + interruptedAt));
                }
                else if (!section.told()) {
                    problems.add(section.describe() + " was lost at the store at " + section.lostAt() + " ("
                            + section.lostBy() + ") while it held the lease, and was never interrupted nor told");
                }
            }
            if (interruptedAt == null) {
                continue;
            }
            for (Op write : section.writes()) {
                if (!write.forced && write.invokedAt - interruptedAt > 0) {
                    problems.add("write " + write.id + " of the " + section.describe() + " was invoked at "
                            + write.invokedAt + ", after its section was interrupted at " + interruptedAt
                            + ": the section went on after its interrupt");
                }
            }
        }
        if (fenced) {
            forcedWritesAfterASuccessorsWrite(history.ops(), table, problems);
        }
    }

    /**
     * Property 8 of the class comment: in the table's commit order, the rows of one section (term) form one block. A
     * row of a section that comes after a row of another section which itself came after the first section's earlier
     * rows means the two acted at the resource at once, whatever the clocks say. Rows whose write is in no section
     * are left to the reconciliation.
     */
    private static int interleavedSections(History history, List<Accepted> table, List<String> problems) {
        String what = history.terms() ? "term" : "section";
        Map<Long, History.Section> sectionOfWrite = new java.util.HashMap<>();
        for (History.Section section : history.sections(true).all()) {
            section.writes().forEach(write -> sectionOfWrite.put(write.id, section));
        }
        Set<History.Section> closed = new HashSet<>();
        History.Section current = null;
        Accepted last = null;
        int interleaved = 0;
        for (Accepted row : table) {
            History.Section section = sectionOfWrite.get(row.writeId());
            if (section == null || section == current) {
                last = section == null ? last : row;
                continue;
            }
            if (closed.contains(section)) {
                interleaved++;
                problems.add("row " + row.seq() + " (write " + row.writeId() + ") of the " + what + " of worker "
                        + section.worker() + " with token " + section.token() + " came after row " + last.seq()
                        + " of the " + what + " of worker " + current.worker() + " with token " + current.token()
                        + ", which came after the first " + what + "'s earlier rows: the two " + what
                        + "s overlapped at the resource");
            }
            if (current != null) {
                closed.add(current);
            }
            current = section;
            last = row;
        }
        return interleaved;
    }

    /**
     * Property 9 of the class comment, for histories of terms: every term ended (a RELEASE) before its worker's next
     * term and by the end of the run.
     */
    private static void checkTerms(History history, List<String> problems) {
        for (History.Section term : history.sections(true).all()) {
            if (term.release() == null) {
                problems.add("the term of worker " + term.worker() + " with token " + term.token() + " (grant "
                        + term.acquire().id + ") never ended before the worker's next term or the end of the run: no"
                        + " revoked event, or a term granted while another was open");
            }
        }
    }

    /** A forced stale write may land before the successor's first write, never after it: the fence must refuse it. */
    private static void forcedWritesAfterASuccessorsWrite(List<Op> ops, List<Accepted> table, List<String> problems) {
        Set<Long> inTable = new HashSet<>();
        table.forEach(row -> inTable.add(row.writeId()));
        for (Op forced : ops) {
            if (forced.kind != Kind.WRITE || !forced.forced || !(forced.ok() || inTable.contains(forced.id))) {
                continue;
            }
            ops.stream().filter(o -> o.kind == Kind.WRITE && o.ok() && o.token > forced.token
                    && o.completedAt - forced.invokedAt < 0).findFirst().ifPresent(successor -> problems.add(
                            "forced write " + forced.id + " with token " + forced.token + " was accepted, although write "
                                    + successor.id + " with token " + successor.token + " had been acknowledged before"
                                    + " it was invoked"));
        }
    }

    /** Refused writes invoked after a write with a higher token was acknowledged; see the class comment. */
    public static int staleWritesRefusedAfterWrite(History history) {
        List<Op> writes = history.ops().stream().filter(o -> o.kind == Kind.WRITE).toList();
        return (int) writes.stream().filter(w -> w.outcome == Outcome.FAIL)
                .filter(w -> writes.stream()
                        .anyMatch(v -> v.ok() && v.token > w.token && v.completedAt - w.invokedAt < 0))
                .count();
    }

    /** Rows of the table invoked after a grant of a higher token was acknowledged, described; see the class comment. */
    private static List<String> staleWritesAfterGrant(List<Op> grants, List<Op> writes, List<Accepted> table) {
        Map<Long, Op> writeById = writes.stream().collect(Collectors.toMap(o -> o.id, Function.identity()));
        List<Op> byCompletion = new ArrayList<>(grants);
        byCompletion.sort(Comparator.comparingLong(o -> o.completedAt));
        List<String> found = new ArrayList<>();
        for (Accepted row : table) {
            Op write = writeById.get(row.writeId());
            if (write == null) {
                continue; // its invocation never reached the history: no time to compare
            }
            Op successor = null;
            for (Op grant : byCompletion) {
                if (grant.completedAt - write.invokedAt >= 0) {
                    break;
                }
                if (grant.token > row.token() && (successor == null || grant.token > successor.token)) {
                    successor = grant;
                }
            }
            if (successor != null) {
                found.add("stale write accepted after a successor's grant: write " + write.id + " with token "
                        + row.token() + " was invoked after grant " + successor.id + " of token " + successor.token
                        + " had been acknowledged");
            }
        }
        return found;
    }

    private static int grantsOutOfRealTimeOrder(List<Op> grants, List<String> problems) {
        List<Op> byCompletion = new ArrayList<>(grants);
        byCompletion.sort(Comparator.comparingLong(o -> o.completedAt));
        List<Op> byInvocation = new ArrayList<>(grants);
        byInvocation.sort(Comparator.comparingLong(o -> o.invokedAt));
        int violations = 0;
        int next = 0;
        long maxCompleted = Long.MIN_VALUE;
        Op maxOp = null;
        for (Op grant : byInvocation) {
            while (next < byCompletion.size() && byCompletion.get(next).completedAt < grant.invokedAt) {
                Op done = byCompletion.get(next++);
                if (done.token > maxCompleted) {
                    maxCompleted = done.token;
                    maxOp = done;
                }
            }
            if (maxOp != null && grant.token <= maxCompleted) {
                violations++;
                problems.add("grant " + grant.id + " got token " + grant.token + " although grant " + maxOp.id
                        + " had already been acknowledged with token " + maxCompleted);
            }
        }
        return violations;
    }

    /**
     * Holding intervals of different workers that overlap. A holding interval runs from the grant's acknowledgement
     * to the release's request; a section that ended without a RELEASE (its lease lost, its write failed) still held
     * until its last known time: the later of the completion of its last op and its worker's last interrupt before
     * its next acquire, or the end of the run when an op of it never completed.
     */
    private static int countOverlaps(List<Op> ops, History history) {
        record Interval(int worker, long from, long to) {
        }
        List<Interval> intervals = new ArrayList<>();
        List<Op> sorted = new ArrayList<>(ops);
        sorted.sort(Comparator.comparingLong(o -> o.invokedAt));
        java.util.Map<Integer, Long> heldSince = new java.util.HashMap<>();
        java.util.Map<Integer, Long> lastKnown = new java.util.HashMap<>();
        java.util.function.BiConsumer<Integer, Long> closeUnreleased = (worker, before) -> {
            Long from = heldSince.remove(worker);
            if (from != null) {
                long to = lastKnown.get(worker);
                for (long t : history.interruptTimesOf(worker)) {
                    if (to != Long.MAX_VALUE && t - from >= 0 && (before == Long.MAX_VALUE || t - before < 0)
                            && t - to > 0) {
                        to = t;
                    }
                }
                intervals.add(new Interval(worker, from, to));
            }
        };
        for (Op op : sorted) {
            if (op.kind == Kind.ACQUIRE) {
                closeUnreleased.accept(op.worker, op.invokedAt);
                if (op.ok()) {
                    heldSince.put(op.worker, op.completedAt);
                    lastKnown.put(op.worker, op.completedAt);
                }
            }
            else if (op.kind == Kind.RELEASE && heldSince.containsKey(op.worker)) {
                intervals.add(new Interval(op.worker, heldSince.remove(op.worker), op.invokedAt));
            }
            else if (heldSince.containsKey(op.worker)) {
                lastKnown.merge(op.worker, op.outcome == Outcome.PENDING ? Long.MAX_VALUE : op.completedAt,
                        (a, b) -> a == Long.MAX_VALUE || b == Long.MAX_VALUE ? Long.MAX_VALUE : Math.max(a, b));
            }
        }
        new ArrayList<>(heldSince.keySet()).forEach(worker -> closeUnreleased.accept(worker, Long.MAX_VALUE));
        intervals.sort(Comparator.comparingLong(Interval::from));
        int overlaps = 0;
        for (int i = 0; i < intervals.size(); i++) {
            for (int j = i + 1; j < intervals.size() && intervals.get(j).from() < intervals.get(i).to(); j++) {
                if (intervals.get(j).worker() != intervals.get(i).worker()) {
                    overlaps++;
                }
            }
        }
        return overlaps;
    }
}
