package dev.lease.faults.checker;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import dev.lease.faults.workload.LeaderWorker;
import dev.lease.faults.workload.Worker;

/**
 * Everything the workers of a fault scenario did, as operations with an invocation and a completion on the
 * monotonic clock, in the style of a Jepsen history. Thread-safe; the checker reads it after the run.
 *
 * <p>Times are {@link System#nanoTime()} values. Child JVMs report their own {@code nanoTime}, which is comparable
 * with ours: on Linux both read the system-wide {@code CLOCK_MONOTONIC} (and {@code faketime} is told to leave it
 * alone). Besides operations, a history keeps the faults injected, when holders were interrupted (worker and the
 * token of the section interrupted) and, where the harness knows it, when the store lost a grant; from these it
 * derives the holders' {@linkplain #sections sections} and the {@linkplain #lossToInterrupt() loss → interrupt}
 * measure. One history is about one lease name.
 */
public final class History {

    public enum Kind { ACQUIRE, WRITE, RELEASE }

    public enum Outcome { OK, FAIL, UNKNOWN, PENDING }

    /** One operation. {@code token} is the grant's token (ACQUIRE) or the token a write carried (WRITE). */
    public static final class Op {
        public final long id;
        public final int worker;
        public final Kind kind;
        public final long invokedAt;
        public volatile long completedAt;
        public volatile Outcome outcome = Outcome.PENDING;
        public volatile long token = -1;
        public volatile String detail = "";
        /** A WRITE made whatever the section's interrupts said, on purpose: see {@link History#forced(long)}. */
        public volatile boolean forced;

        Op(long id, int worker, Kind kind, long invokedAt) {
            this.id = id;
            this.worker = worker;
            this.kind = kind;
            this.invokedAt = invokedAt;
        }

        public boolean ok() {
            return outcome == Outcome.OK;
        }

        String toJson() {
            return "{\"id\":" + id + ",\"worker\":" + worker + ",\"kind\":\"" + kind + "\",\"invokedAt\":" + invokedAt
                    + ",\"completedAt\":" + completedAt + ",\"outcome\":\"" + outcome + "\",\"token\":" + token
                    + (forced ? ",\"forced\":true" : "") + ",\"detail\":\"" + detail.replace("\\", "\\\\").replace("\"", "'")
                    + "\"}";
        }
    }

    /**
     * A fault injected during the run at {@code at}: when the harness acted, which says nothing of when, or whether,
     * a store lost a grant (losses are measured at the store: see {@link #sections}).
     */
    record Fault(String what, long at) {
    }

    /** Token of an {@link Interrupt} whose reporter did not say which section it interrupted. */
    public static final long UNKNOWN_TOKEN = -1;

    /**
     * Worker {@code worker} saw the interrupt of its section holding {@code token} at {@code at}: when its thread
     * caught the InterruptedException, or found the interrupt flag set (a write cannot be interrupted halfway, so an
     * interrupt that arrives during it is found right after it). That is at or after the engine delivered it, which
     * no holder can see. With {@link #UNKNOWN_TOKEN}, the section is the worker's section open at {@code at}.
     */
    public record Interrupt(int worker, long token, long at) {
    }

    /**
     * The store lost the grant of {@code token} to {@code worker} at {@code at}, as the harness knows it better than
     * the history's grants tell (a ZooKeeper session expiry seen by a watcher, a lease row deleted).
     */
    record StoreLoss(int worker, long token, long at, String what) {
    }

    /** The process of {@code worker} was killed at {@code at} ({@link #killed}). */
    record Kill(int worker, long at) {
    }

    /**
     * One leased section of a worker: from its grant ({@code acquire}, an ACQUIRE OK) until its RELEASE, or until it
     * ended on its interrupt (then {@code release} is null). {@code lostAt} is when the store lost the grant while the
     * section still held it (see {@link History#sections}), null when it did not.
     */
    public record Section(Op acquire, Op release, List<Interrupt> interrupts, List<Op> writes, Long lostAt, String lostBy,
            Long killedAt) {

        public int worker() {
            return acquire.worker;
        }

        public long token() {
            return acquire.token;
        }

        /** When its holder first saw an interrupt, null if it never did. */
        public Long interruptedAt() {
            return interrupts.stream().map(Interrupt::at).min(Comparator.naturalOrder()).orElse(null);
        }

        /**
         * Whether the history says how it ended: a RELEASE, an interrupt, or its process killed (hand-made histories
         * often say neither).
         */
        boolean judged() {
            return release != null || !interrupts.isEmpty() || killedAt != null;
        }

        /** Ended with a normal release (RELEASE OK), as opposed to LeaseLostException (RELEASE FAIL) or an interrupt. */
        boolean releasedNormally() {
            return release != null && release.ok();
        }

        /**
         * The holder was told its lease was lost: interrupted, or LeaseLostException at its end (RELEASE FAIL); or it
         * cannot act on it any more, its process killed while it held the lease ({@link History#killed}) and before the
         * store lost it: a holder the store had lost before the kill should have been interrupted by then.
         */
        boolean told() {
            return !interrupts.isEmpty() || (release != null && release.outcome == Outcome.FAIL)
                    || (killedAt != null && (lostAt == null || killedAt - lostAt <= 0));
        }

        String describe() {
            return "section of worker " + worker() + " with token " + token() + " (grant " + acquire.id + ")";
        }
    }

    /** The sections of a history, and what of it could not be placed in one. */
    public record Sections(List<Section> all, List<String> problems) {
    }

    /**
     * The loss → interrupt measure over the sections a store lost while they held it, one sample per lost section:
     * {@code afterNanos}, from the loss to the section's first interrupt, when that came after the loss;
     * {@code beforeNanos}, how long before the loss it came otherwise (the design's intent: local validity ends before
     * anyone else can be granted); {@code toldAtTheEnd}, sections never interrupted whose holder got LeaseLostException
     * when its work returned; {@code neverTold}, sections neither interrupted nor told.
     */
    public record LossToInterrupt(List<Long> afterNanos, List<Long> beforeNanos, int toldAtTheEnd, int neverTold) {

        int lostSections() {
            return afterNanos.size() + beforeNanos.size() + toldAtTheEnd + neverTold;
        }
    }

    private final boolean throughEngine;
    private final boolean terms;
    private final AtomicLong ids = new AtomicLong();
    private final List<Op> ops = new ArrayList<>();
    private final Map<Long, Op> byId = new ConcurrentHashMap<>();
    private final List<Interrupt> interrupts = new ArrayList<>();
    private final List<StoreLoss> storeLosses = new ArrayList<>();
    private final List<Kill> kills = new ArrayList<>();
    private final List<Fault> faults = new ArrayList<>();
    private final List<String> problems = new ArrayList<>();
    private final Map<String, String> attributes = new java.util.TreeMap<>();

    /** A history of holders that run their sections through the lease engine, which interrupts them on loss. */
    public History() {
        this(true, false);
    }

    private History(boolean throughEngine, boolean terms) {
        this.throughEngine = throughEngine;
        this.terms = terms;
    }

    /**
     * A history of holders that call a backend straight, with no engine to interrupt them: the checker's properties of
     * sections (lost ones told, interrupted ones stopped) do not apply.
     */
    static History withoutEngine() {
        return new History(false, false);
    }

    /**
     * A history of the terms of one election ({@link LeaderWorker}): a section is a term, from its grant (ACQUIRE OK)
     * to its end (RELEASE: OK when the worker gave it up, FAIL when it was lost), with any number of writes. The
     * checker then also demands that each worker's terms follow one another, each ended before the next, and that
     * every term ended by the end of the run (the harness closes every election before the check).
     */
    public static History ofTerms() {
        return new History(true, true);
    }

    boolean throughEngine() {
        return throughEngine;
    }

    /** Whether this is a history of election terms; see {@link #ofTerms()}. */
    boolean terms() {
        return terms;
    }

    public Op invoke(int worker, Kind kind) {
        return invoke(ids.incrementAndGet(), worker, kind, System.nanoTime());
    }

    /** Records an invocation with an id chosen by the worker (unique across workers) and its own timestamp. */
    public Op invoke(long id, int worker, Kind kind, long invokedAt) {
        Op op = new Op(id, worker, kind, invokedAt);
        if (byId.putIfAbsent(id, op) != null) {
            problem("op " + id + " (" + kind + " of worker " + worker + ") invoked twice: its events are garbled");
            return op;
        }
        synchronized (ops) {
            ops.add(op);
        }
        return op;
    }

    public void complete(Op op, Outcome outcome, long token, String detail) {
        complete(op.id, outcome, token, System.nanoTime(), detail);
    }

    /**
     * Completes the operation {@code id} at {@code completedAt}. An unknown id is a problem of the run: its invocation
     * was lost, so the history is incomplete and a grant or write may be missing from it.
     */
    public void complete(long id, Outcome outcome, long token, long completedAt, String detail) {
        Op op = byId.get(id);
        if (op == null) {
            problem("completion of op " + id + " (" + outcome + ", token " + token + ") whose invocation is missing");
            return;
        }
        op.token = token;
        op.detail = detail == null ? "" : detail;
        op.completedAt = completedAt;
        op.outcome = outcome;
    }

    /** A holder's section was interrupted at {@code at}, the section not said: see {@link Interrupt}. */
    public void interrupted(int worker, long at) {
        interrupted(worker, UNKNOWN_TOKEN, at);
    }

    /** The section of {@code worker} holding {@code token} was interrupted at {@code at}; see {@link Interrupt}. */
    public void interrupted(int worker, long token, long at) {
        synchronized (interrupts) {
            interrupts.add(new Interrupt(worker, token, at));
        }
    }

    /**
     * How many sections of {@code worker} with a token above {@code above} were interrupted: a section can report
     * several interrupts (one in its sleep, one found after its write), and they arrive from a child JVM's stream
     * some time after the fact, so counting interrupt events would race with the stream.
     */
    public long interruptedSectionsOf(int worker, long above) {
        synchronized (interrupts) {
            return interrupts.stream().filter(i -> i.worker() == worker && i.token() > above).map(Interrupt::token)
                    .distinct().count();
        }
    }

    /** When {@code worker} was interrupted, in the order recorded. */
    public List<Long> interruptTimesOf(int worker) {
        synchronized (interrupts) {
            return interrupts.stream().filter(i -> i.worker() == worker).map(Interrupt::at).toList();
        }
    }

    /**
     * Marks the WRITE {@code id} as forced: made on purpose whatever its section's interrupts said (a frozen process
     * cannot see the loss its engine declares), so the fence, not the holder, must stop it.
     */
    public void forced(long id) {
        Op op = byId.get(id);
        if (op == null || op.kind != Kind.WRITE) {
            problem("op " + id + " marked as a forced write, which the history knows " + (op == null ? "not at all"
                    : "as a " + op.kind));
            return;
        }
        op.forced = true;
    }

    /**
     * The process of {@code worker} (a child JVM) was killed with SIGKILL at {@code at}: what it had invoked and not
     * completed ends UNKNOWN at {@code at} (a write in flight may have committed: the check finds it in the table, with
     * the token of the worker's last grant), and its section open then ends there, killed: a dead holder cannot be
     * told of a loss, nor write after it. Call it once the process is gone and its event stream read to the end.
     */
    public void killed(int worker, long at) {
        long lastToken = ops().stream().filter(o -> o.kind == Kind.ACQUIRE && o.ok() && o.worker == worker)
                .mapToLong(o -> o.token).reduce((first, second) -> second).orElse(-1);
        for (Op op : ops()) {
            if (op.worker == worker && op.outcome == Outcome.PENDING) {
                complete(op.id, Outcome.UNKNOWN, op.kind == Kind.ACQUIRE ? -1 : lastToken, at,
                        "its process was killed (SIGKILL)");
            }
        }
        synchronized (kills) {
            kills.add(new Kill(worker, at));
        }
    }

    /** See {@link StoreLoss}. */
    void storeLost(int worker, long token, long at, String what) {
        synchronized (storeLosses) {
            storeLosses.add(new StoreLoss(worker, token, at, what));
        }
    }

    /** A fault injected at {@code at}; see {@link Fault}. */
    public void fault(String what, long at) {
        synchronized (faults) {
            faults.add(new Fault(what, at));
        }
    }

    /**
     * Something that makes the history untrustworthy, found while recording it (a garbled event line, an event
     * stream that ended early, a worker that would not stop): the check fails on it, since a missing grant or write
     * could hide a duplicate token or a stale write.
     */
    public void problem(String what) {
        synchronized (problems) {
            problems.add(what);
        }
    }

    /** Something a reader of the history needs to know about the run, such as the seed that replays it. */
    public void attribute(String key, String value) {
        synchronized (attributes) {
            attributes.put(key, value);
        }
    }

    private String attributesJson() {
        StringBuilder sb = new StringBuilder();
        synchronized (attributes) {
            attributes.forEach((k, v) -> sb.append('"').append(k.replace("\"", "'")).append("\": \"")
                    .append(v.replace("\\", "\\\\").replace("\"", "'")).append("\",\n"));
        }
        return sb.toString();
    }

    public List<String> problems() {
        synchronized (problems) {
            return List.copyOf(problems);
        }
    }

    List<Fault> faults() {
        synchronized (faults) {
            return List.copyOf(faults);
        }
    }

    public List<Interrupt> interrupts() {
        synchronized (interrupts) {
            return List.copyOf(interrupts);
        }
    }

    List<StoreLoss> storeLosses() {
        synchronized (storeLosses) {
            return List.copyOf(storeLosses);
        }
    }

    public List<Op> ops() {
        synchronized (ops) {
            return List.copyOf(ops);
        }
    }

    /**
     * The holders' sections, with their interrupts, writes and store-side loss. A worker runs one section at a time, so
     * a WRITE, a RELEASE or an interrupt belongs to the worker's last grant (ACQUIRE OK) acknowledged before it, on
     * the worker's own clock; an interrupt that names a token belongs to the worker's last grant of that token
     * acknowledged before it, and to no section when there is none.
     *
     * <p>The store lost a section's grant when the harness recorded a {@link StoreLoss} of it (the earliest counts),
     * or else at its successor's grant: the ACQUIRE, by another worker, of the next token the store handed out (with
     * tokens, the smallest above the section's, whatever that acquire's outcome: an acquire that failed after its
     * grant still took the lease; without tokens, the first ACQUIRE OK acknowledged after the section's own). The
     * store made that grant somewhere between the acquire's invocation and its completion; the completion is the
     * time taken, because the invocation can be a whole {@code waitFor} earlier (an ACQUIRE spans the wait), while the
     * completion trails the grant by one response. So a delay measured from it is short by at most that response, and
     * an interrupt within one response before it may really have followed the grant. A loss counts only while the
     * section held the grant: before its normal release (RELEASE OK invoked) if it had one; at any time after it
     * otherwise, since a section that ended lost is released in the background, which the history does not see: a
     * successor of such a section is taken as its loss even when the courtesy release freed the name first.
     *
     * @param fenced whether grants carry tokens; without them (EFFICIENCY, token 0) the successor goes by time
     */
    public Sections sections(boolean fenced) {
        List<Op> all = ops();
        List<String> unplaced = new ArrayList<>();
        List<Op> grants = all.stream().filter(o -> o.kind == Kind.ACQUIRE && o.ok())
                .sorted(Comparator.comparingLong(o -> o.completedAt)).toList();
        Map<Integer, List<Op>> grantsOf = new HashMap<>();
        grants.forEach(g -> grantsOf.computeIfAbsent(g.worker, w -> new ArrayList<>()).add(g));
        // With tokens, the store's next grant after token t is the acquire of the smallest token above t.
        TreeMap<Long, Op> byToken = new TreeMap<>();
        all.stream().filter(o -> o.kind == Kind.ACQUIRE && o.outcome != Outcome.PENDING && o.token >= 0)
                .sorted(Comparator.comparingLong(o -> o.completedAt)).forEach(o -> byToken.putIfAbsent(o.token, o));
        Map<Op, List<Interrupt>> interruptsOf = new HashMap<>();
        Map<Op, List<Op>> writesOf = new HashMap<>();
        Map<Op, Op> releaseOf = new HashMap<>();
        for (Op op : all) {
            if (op.kind == Kind.ACQUIRE) {
                continue;
            }
            Op grant = sectionAt(grantsOf, op.worker, op.invokedAt);
            if (grant == null) {
                continue; // a write outside any section: reconciliation reports a token never granted
            }
            if (op.kind == Kind.WRITE) {
                writesOf.computeIfAbsent(grant, g -> new ArrayList<>()).add(op);
            }
            else {
                releaseOf.putIfAbsent(grant, op);
            }
        }
        for (Interrupt interrupt : interrupts()) {
            Op grant = interrupt.token() == UNKNOWN_TOKEN ? sectionAt(grantsOf, interrupt.worker(), interrupt.at())
                    : grantOf(grantsOf, interrupt.worker(), interrupt.token(), interrupt.at());
            if (grant == null) {
                unplaced.add("interrupt of worker " + interrupt.worker() + " with token " + interrupt.token() + " at "
                        + interrupt.at() + " is in no section of that worker with that token");
                continue;
            }
            interruptsOf.computeIfAbsent(grant, g -> new ArrayList<>()).add(interrupt);
        }
        List<StoreLoss> explicit = storeLosses();
        Map<Op, Long> killedIn = new HashMap<>();
        synchronized (kills) {
            for (Kill kill : kills) {
                Op grant = sectionAt(grantsOf, kill.worker(), kill.at());
                // Only a section still open: one whose RELEASE was invoked before had ended already.
                if (grant != null && !(releaseOf.containsKey(grant)
                        && releaseOf.get(grant).invokedAt - kill.at() <= 0)) {
                    killedIn.putIfAbsent(grant, kill.at());
                }
            }
        }
        List<Section> sections = new ArrayList<>();
        for (int i = 0; i < grants.size(); i++) {
            Op grant = grants.get(i);
            Op release = releaseOf.get(grant);
            Long lostAt = null;
            String lostBy = null;
            // Without tokens, the section the loss belongs to goes by time.
            StoreLoss known = explicit.stream().filter(l -> l.worker() == grant.worker && l.token() == grant.token
                    && (fenced || sectionAt(grantsOf, l.worker(), l.at()) == grant))
                    .min(Comparator.comparingLong(StoreLoss::at)).orElse(null);
            if (known != null) {
                lostAt = known.at();
                lostBy = known.what();
            }
            else {
                Map.Entry<Long, Op> next = fenced ? byToken.higherEntry(grant.token) : null;
                Op successor = fenced ? (next == null ? null : next.getValue())
                        : (i + 1 < grants.size() ? grants.get(i + 1) : null);
                if (successor != null && successor.worker != grant.worker) {
                    lostAt = successor.completedAt;
                    lostBy = "grant " + successor.id + " of token " + successor.token + " to worker " + successor.worker;
                }
            }
            if (lostAt != null && release != null && release.ok() && release.invokedAt - lostAt <= 0) {
                lostAt = null; // released normally before: a handover, not a loss
                lostBy = null;
            }
            sections.add(new Section(grant, release, List.copyOf(interruptsOf.getOrDefault(grant, List.of())),
                    List.copyOf(writesOf.getOrDefault(grant, List.of())), lostAt, lostBy, killedIn.get(grant)));
        }
        return new Sections(List.copyOf(sections), List.copyOf(unplaced));
    }

    /** The loss → interrupt measure over the judged sections the store lost; see {@link LossToInterrupt}. */
    public LossToInterrupt lossToInterrupt(boolean fenced) {
        List<Long> after = new ArrayList<>();
        List<Long> before = new ArrayList<>();
        int atTheEnd = 0;
        int never = 0;
        for (Section section : sections(fenced).all()) {
            if (section.lostAt() == null || !section.judged() || section.killedAt() != null) {
                continue; // a killed holder has no interrupt to measure
            }
            Long interruptedAt = section.interruptedAt();
            if (interruptedAt != null) {
                long delay = interruptedAt - section.lostAt();
                (delay >= 0 ? after : before).add(Math.abs(delay));
            }
            else if (section.told()) {
                atTheEnd++;
            }
            else {
                never++;
            }
        }
        return new LossToInterrupt(List.copyOf(after), List.copyOf(before), atTheEnd, never);
    }

    /**
     * The grant of {@code worker}'s section holding {@code token} at {@code at}: its last grant of that token
     * acknowledged at or before then. By token rather than by time alone: a term's work thread reports an interrupt a
     * little after the fact, possibly after the campaign thread recorded the term's end and the worker's next grant.
     */
    private static Op grantOf(Map<Integer, List<Op>> grantsOf, int worker, long token, long at) {
        Op found = null;
        for (Op grant : grantsOf.getOrDefault(worker, List.of())) {
            if (grant.completedAt - at > 0) {
                break;
            }
            if (grant.token == token) {
                found = grant;
            }
        }
        return found;
    }

    /** The grant of {@code worker}'s section open at {@code at}: its last grant acknowledged at or before then. */
    private static Op sectionAt(Map<Integer, List<Op>> grantsOf, int worker, long at) {
        List<Op> own = grantsOf.getOrDefault(worker, List.of());
        int low = 0;
        int high = own.size() - 1;
        Op found = null;
        while (low <= high) {
            int mid = (low + high) >>> 1;
            if (own.get(mid).completedAt - at <= 0) {
                found = own.get(mid);
                low = mid + 1;
            }
            else {
                high = mid - 1;
            }
        }
        return found;
    }

    public String toJson() {
        StringBuilder sb = new StringBuilder("{").append(attributesJson()).append("\"faults\": [\n");
        List<Fault> fs = faults();
        for (int i = 0; i < fs.size(); i++) {
            sb.append("  {\"what\":\"").append(fs.get(i).what().replace("\"", "'")).append("\",\"at\":")
                    .append(fs.get(i).at()).append(i + 1 < fs.size() ? "},\n" : "}\n");
        }
        sb.append("],\n\"problems\": [");
        List<String> ps = problems();
        for (int i = 0; i < ps.size(); i++) {
            sb.append(i == 0 ? "\n  \"" : ",\n  \"").append(ps.get(i).replace("\\", "\\\\").replace("\"", "'"))
                    .append('"');
        }
        sb.append("],\n\"interrupts\": [");
        List<Interrupt> is = interrupts();
        for (int i = 0; i < is.size(); i++) {
            sb.append(i == 0 ? "\n  " : ",\n  ").append("{\"worker\":").append(is.get(i).worker()).append(",\"token\":")
                    .append(is.get(i).token()).append(",\"at\":").append(is.get(i).at()).append('}');
        }
        sb.append("],\n\"storeLosses\": [");
        List<StoreLoss> ls = storeLosses();
        for (int i = 0; i < ls.size(); i++) {
            sb.append(i == 0 ? "\n  " : ",\n  ").append("{\"worker\":").append(ls.get(i).worker()).append(",\"token\":")
                    .append(ls.get(i).token()).append(",\"at\":").append(ls.get(i).at()).append(",\"what\":\"")
                    .append(ls.get(i).what().replace("\\", "\\\\").replace("\"", "'")).append("\"}");
        }
        sb.append("],\n\"ops\": [\n");
        List<Op> all = ops();
        for (int i = 0; i < all.size(); i++) {
            sb.append("  ").append(all.get(i).toJson()).append(i + 1 < all.size() ? ",\n" : "\n");
        }
        return sb.append("]}\n").toString();
    }
}
