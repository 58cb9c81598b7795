package dev.lease.faults.harness;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.lease.LeaseKind;
import dev.lease.core.LeaseEngine;
import dev.lease.faults.checker.History;
import dev.lease.faults.checker.HistoryChecker;
import dev.lease.faults.mutants.Mutant;
import dev.lease.faults.mutants.MutantRuns;
import dev.lease.faults.workload.HolderMain;
import dev.lease.faults.workload.LeaderWorker;
import dev.lease.faults.workload.LeaseWorker;
import dev.lease.faults.workload.Ledger;
import dev.lease.faults.workload.LongHolds;
import dev.lease.testing.TcpProxy;

/**
 * The shared harness of the nemesis scenarios: one {@link FaultRun} per lease name (a history covers one name and
 * one resource), all running at once against the same instances, and one {@link Nemesis} whose every fault is
 * recorded in every run. The scenario's seed comes from {@link Seeds} ({@code -Dlease-test.seed}), is
 * logged and stored in every history; its length from {@code -Dlease-test.nemesis-seconds} (a short default,
 * a long one under {@code -Psoak}), stretched while the cycle goal is not reached (see {@link #strike()}).
 *
 * <p>A CORRECTNESS scenario starts with one forced stale write of its first child holder on the first lease name
 * ({@link StaleWrites#pausedAcross}), before the nemesis strikes: the nemesis alone rarely puts a write after a
 * successor's, so without it a fence that does not compare could pass a short run unnoticed.
 *
 * <p>A scenario may add an election ({@link #election()}): a leadership workload on its instances ({@link #leader}),
 * one more run with a history of terms, struck by the same faults; its terms are not counted in the cycle goal.
 *
 * <p>Also the faults every backend shares, registered on the nemesis by the scenario: pausing a child holder,
 * cutting a holder's link to the lease store, and delaying or timing out its link to the resource database.
 */
public final class NemesisScenario implements AutoCloseable {

    private static final Log log = LogFactory.getLog(NemesisScenario.class);

    /** How long the workload runs while the nemesis strikes. */
    static final Duration LENGTH = Duration.ofSeconds(Long.getLong("lease-test.nemesis-seconds", Soak.ON ? 240 : 25));

    /**
     * The same in a mutant run ({@link MutantRuns}): a mutant that the forced stale write does not catch has to show
     * within a short run, or the detection table costs a soak of its own.
     */
    static final Duration MUTANT_LENGTH = Duration.ofSeconds(Long.getLong("lease-test.nemesis-mutant-seconds", 8));

    /**
     * The check of the CORRECTNESS ledgers: {@link Ledger.Check#FENCED}, or {@code -Dlease-test.nemesis-ledger=BROKEN}
     * (in-process holders then write through a fence that does not compare) to see the scenarios fail.
     */
    public static final Ledger.Check CHECK = Ledger.Check.valueOf(System.getProperty("lease-test.nemesis-ledger", "FENCED"));

    /** Cycles a CORRECTNESS scenario aims at: {@code -Dlease-test.nemesis-cycles}, 1,000, or 10,000 in a soak. */
    static final long CYCLE_GOAL = Long.getLong("lease-test.nemesis-cycles", Soak.ON ? 10_000 : 1_000);

    /** How many holds in a hundred outlast the ttl. */
    static final int LONG_HOLD_PERCENT = 2;

    /** The resource links' socket timeout. */
    static final int RESOURCE_TIMEOUT_SECONDS = 10;

    private static final byte[] COMMIT = "COMMIT".getBytes(StandardCharsets.US_ASCII);

    public final String prefix;
    public final long seed;
    private final LeaseKind kind;
    private final List<FaultRun> runs = new ArrayList<>();
    private final List<String> leases = new ArrayList<>();
    private final List<Ledger> ledgers = new ArrayList<>();
    private final Function<String, Ledger> checked;
    private final String backend;
    /** The run of the scenario's election and its ledger, when it has one ({@link #election()}). */
    private FaultRun election;
    private Ledger electionLedger;
    private Nemesis nemesis;
    /** The child whose first write is frozen for the forced stale write, and its lease-store link (or null). */
    private ChildHolder forced;
    private TcpProxy forcedLink;

    /**
     * @param checked the ledger of one lease name, straight to the resource database: the one the check reads
     */
    public NemesisScenario(String prefix, String backend, LeaseKind kind, int names, Function<String, Ledger> checked) {
        this.prefix = prefix;
        this.kind = kind;
        this.checked = checked;
        this.backend = backend;
        this.seed = Seeds.of(prefix);
        log.info(prefix + ": " + length().toSeconds() + " s");
        for (int i = 1; i <= names; i++) {
            String lease = prefix + "-" + i;
            Ledger ledger = checked.apply(lease);
            ledgers.add(ledger);
            FaultRun run = new FaultRun(lease, backend, kind, ledger);
            run.history.attribute("seed", Long.toString(seed));
            run.history.attribute("replay", Seeds.replay(seed));
            runs.add(run);
            leases.add(lease);
        }
    }

    public List<FaultRun> runs() {
        return runs;
    }

    /** The runs of the lease names, then the election's, if any. */
    private List<FaultRun> all() {
        List<FaultRun> all = new ArrayList<>(runs);
        if (election != null) {
            all.add(election);
        }
        return all;
    }

    /**
     * Adds an election to the scenario, {@code <prefix>-leader}: a leadership workload ({@link LeaderWorker}) on the
     * instances that {@link #leader} starts it on, struck by the same nemesis as the leases (their links, the stores,
     * the resource), with a history of terms checked like the others ({@link FaultRun#leadership}). Before the
     * nemesis starts.
     */
    public void election() {
        String name = prefix + "-leader";
        electionLedger = checked.apply(name);
        election = FaultRun.leadership(name, backend, kind, electionLedger);
        election.history.attribute("seed", Long.toString(seed));
        election.history.attribute("replay", Seeds.replay(seed));
    }

    /**
     * Starts leader {@code id} on {@code engine}, campaigning for the scenario's election ({@link #election()}) and
     * writing through {@code link} (its ledger for the election's name). Its holds are the leases' holds, some longer
     * than the ttl, which only the term's renewal carries through.
     */
    public void leader(int id, LeaseEngine engine, Holds holds, Function<String, Ledger> link) {
        String name = prefix + "-leader";
        long leaderSeed = seed * 37 + id;
        election.leader(id, engine, holds.config(name, leaderSeed), new LongHolds(LONG_HOLD_PERCENT, holds.ttl(),
                holds.ttl().multipliedBy(2), leaderSeed * 131 + id), link.apply(name));
    }

    List<String> leases() {
        return leases;
    }

    /** The nemesis of this scenario, firing every {@code minGap} to {@code maxGap}; faults are added, then started. */
    public Nemesis nemesis(Duration minGap, Duration maxGap) {
        nemesis = new Nemesis(seed, minGap, maxGap, (what, at) -> all().forEach(run -> run.fault(what, at)));
        return nemesis;
    }

    /**
     * Makes the forced stale write (CORRECTNESS), then runs the workload under the nemesis for {@link #LENGTH}, then,
     * for CORRECTNESS backends, on until the runs together did {@link #CYCLE_GOAL} cycles (acquire attempts), for
     * half as long again at most (as long again in a soak): a loaded machine makes fewer cycles per second, and the
     * goal is a number of cycles, not a speed (half as long again left a soak's JDBC on PostgreSQL at 9,890 of 10,000
     * beside other builds). In a mutant run, {@link #MUTANT_LENGTH} and no cycle goal.
     */
    public void strike() throws Exception {
        if (forced != null) {
            FaultRun run = runs.get(0);
            // A JDBC child stopped in the middle of a renewal keeps the lease row locked, and nobody could take the
            // lease over: its connections are reset, so that the store rolls its transaction back.
            StaleWrites.pausedAcross(run, forced, run.workers(), "reset of its lease-store connections", () -> {
                forcedLink.reset();
                return StaleWrites.Undo.NOTHING;
            });
        }
        nemesis.start();
        Duration length = length();
        Thread.sleep(length.toMillis());
        long deadline = System.nanoTime() + (Soak.ON ? length : length.dividedBy(2)).toNanos();
        boolean goal = kind == LeaseKind.CORRECTNESS && Mutant.active() == Mutant.NONE;
        while (goal && cycles() < CYCLE_GOAL && System.nanoTime() - deadline < 0) {
            Thread.sleep(200);
        }
    }

    private static Duration length() {
        return Mutant.active() == Mutant.NONE ? LENGTH : MUTANT_LENGTH;
    }

    /** Acquire attempts so far, over all runs. */
    long cycles() {
        return runs.stream().mapToLong(run -> run.history.ops().stream().filter(op -> op.kind == History.Kind.ACQUIRE)
                .count()).sum();
    }

    /**
     * Heals everything, then finishes every run (each records its row and checks its history), and fails with every
     * unsafe run, and when the nemesis could not switch a fault on or off.
     */
    public List<HistoryChecker.Verdict> finish() throws Exception {
        nemesis.close();
        List<HistoryChecker.Verdict> verdicts = new ArrayList<>();
        List<AssertionError> failures = new ArrayList<>();
        for (FaultRun run : all()) {
            try {
                verdicts.add(run.finish());
            }
            catch (AssertionError ex) {
                failures.add(ex);
            }
        }
        int cycles = verdicts.stream().mapToInt(HistoryChecker.Verdict::cycles).sum();
        int grants = verdicts.stream().mapToInt(HistoryChecker.Verdict::grants).sum();
        int refused = verdicts.stream().mapToInt(HistoryChecker.Verdict::writesRejected).sum();
        int unknown = verdicts.stream().mapToInt(HistoryChecker.Verdict::writesUnknown).sum();
        int afterGrant = verdicts.stream().mapToInt(HistoryChecker.Verdict::staleWritesAfterGrant).sum();
        int overlaps = verdicts.stream().mapToInt(HistoryChecker.Verdict::overlaps).sum();
        long unknownCommitted = unknownWritesCommitted();
        log.info(prefix + ": seed " + seed + ": " + cycles + " cycles (" + grants + " grants) over " + runs.size()
                + " lease names" + (election == null ? "" : " and one election") + ", " + nemesis.fired()
                + " faults, " + refused + " stale writes refused, " + unknown + " writes unknown (" + unknownCommitted + " of them committed), " + afterGrant
                + " stale writes accepted after a successor's grant, " + overlaps + " overlaps"
                + (failures.isEmpty() ? "" : ", " + failures.size() + " unsafe run(s)"));
        if (!failures.isEmpty()) {
            AssertionError first = new AssertionError(prefix + " (seed " + seed + ", replay with "
                    + Seeds.replay(seed) + "): " + failures.size() + " unsafe run(s)",
                    failures.get(0));
            failures.stream().skip(1).forEach(first::addSuppressed);
            throw first;
        }
        if (!nemesis.errors().isEmpty()) {
            throw new AssertionError(prefix + " (seed " + seed + "): the nemesis failed to inject its faults: "
                    + nemesis.errors());
        }
        return verdicts;
    }

    /** Writes whose worker never learnt the outcome but that are in the table: commits whose reply was lost. */
    private long unknownWritesCommitted() {
        List<FaultRun> checkedRuns = all();
        List<Ledger> checkedLedgers = new ArrayList<>(ledgers);
        if (election != null) {
            checkedLedgers.add(electionLedger);
        }
        long found = 0;
        for (int i = 0; i < checkedRuns.size(); i++) {
            java.util.Set<Long> inTable = new java.util.HashSet<>();
            checkedLedgers.get(i).accepted().forEach(row -> inTable.add(row.writeId()));
            found += checkedRuns.get(i).history.ops().stream().filter(op -> op.kind == History.Kind.WRITE
                    && op.outcome == History.Outcome.UNKNOWN && inTable.contains(op.id)).count();
        }
        return found;
    }

    @Override
    public void close() throws Exception {
        if (nemesis != null) {
            nemesis.close();
        }
        for (FaultRun run : all()) {
            run.close();
        }
    }

    /**
     * Starts worker {@code id} on {@code engine} for every lease name, each writing through {@code link} (its
     * ledger for that name). Holds are short, and {@value #LONG_HOLD_PERCENT}% of them last between one and two ttls,
     * which only renewal carries through.
     */
    public void workers(int id, dev.lease.LeaseTemplate engine, Holds holds, Function<String, Ledger> link) {
        for (int i = 0; i < runs.size(); i++) {
            String lease = leases.get(i);
            long workerSeed = seed * 31 + i;
            runs.get(i).worker(id, engine, holds.config(lease, workerSeed), new LongHolds(LONG_HOLD_PERCENT,
                    holds.ttl(), holds.ttl().multipliedBy(2), workerSeed * 131 + id), link.apply(lease));
        }
    }

    /**
     * Starts child holder {@code id} on the lease name of run {@code index}, with {@code args} for its backend and
     * links ({@link HolderMain}); the rest is added here. In a CORRECTNESS scenario, the first child on the first
     * name freezes its first write ({@code pause-before-write}) for the forced stale write of {@link #strike()}.
     *
     * @param leaseLink the child's link to the lease store
     */
    public ChildHolder child(int id, int index, Holds holds, Map<String, String> args, TcpProxy leaseLink) throws Exception {
        Map<String, String> all = new java.util.HashMap<>(args);
        String lease = leases.get(index);
        all.put("lease", lease);
        all.put("resource", lease);
        all.put("ttl-ms", Long.toString(holds.ttl().toMillis()));
        all.put("wait-ms", Long.toString(holds.waitFor().toMillis()));
        all.put("hold-ms", Long.toString(holds.maxHold().toMillis()));
        all.put("seed", Long.toString(seed * 31 + index));
        all.put("long-hold-percent", Integer.toString(LONG_HOLD_PERCENT));
        all.put("long-hold-min-ms", Long.toString(holds.ttl().toMillis()));
        all.put("long-hold-max-ms", Long.toString(holds.ttl().toMillis() * 2));
        boolean forcing = kind == LeaseKind.CORRECTNESS && index == 0 && forced == null;
        if (forcing) {
            all.put("pause-before-write", "true");
        }
        ChildHolder child = runs.get(index).child(id, all, Map.of());
        if (forcing) {
            forced = child;
            forcedLink = leaseLink;
        }
        return child;
    }

    /**
     * Starts in-process instance {@code id} on {@code engine}: a worker on every lease name ({@link #workers}) and,
     * when the scenario has an election, a leader ({@link #leader}), all writing to the resource through
     * {@code ledgerLink} (a DataSource on the instance's resource link).
     */
    public void instance(int id, LeaseEngine engine, Holds holds, DataSource ledgerLink) {
        workers(id, engine, holds, lease -> Ledger.attach(new ReusedConnections(ledgerLink), CHECK, lease));
        if (election != null) {
            leader(id, engine, holds, lease -> Ledger.attach(new ReusedConnections(ledgerLink), CHECK, lease));
        }
    }

    /**
     * Starts {@code count} child holders (ids 10 on, one on each of the first lease names) with {@code args}, all
     * behind one pair of links, and registers their pauses and the faults of their host ({@link #hostFaults}).
     */
    public void children(int count, Holds holds, Map<String, String> args, TcpProxy leaseLink, TcpProxy resourceLink)
            throws Exception {
        for (int c = 0; c < count; c++) {
            pauses(nemesis, child(10 + c, c, holds, args, leaseLink), holds.ttl());
        }
        hostFaults(nemesis, "the child holders", leaseLink, resourceLink, holds.ttl(), 0.5);
    }

    /**
     * The faults of one host's links: {@link #leaseLinkFaults} and {@link #resourceLinkFaults} at a quarter each,
     * {@link #troubledHost} at {@code troubledWeight}.
     */
    public static void hostFaults(Nemesis nemesis, String holder, TcpProxy leaseLink, TcpProxy resourceLink,
            Duration ttl, double troubledWeight) {
        leaseLinkFaults(nemesis, holder, leaseLink, ttl, 0.25);
        resourceLinkFaults(nemesis, holder, resourceLink, ttl, 0.25);
        troubledHost(nemesis, holder, leaseLink, resourceLink, ttl, troubledWeight);
    }

    /** How holders of a scenario hold: ttl, how long they wait for a busy lease, the longest short hold. */
    public record Holds(LeaseKind kind, Duration ttl, Duration waitFor, Duration maxHold) {

        public LeaseWorker.Config config(String lease, long seed) {
            return new LeaseWorker.Config(lease, kind, ttl, waitFor, maxHold, seed);
        }
    }

    /** Pauses a child holder ({@code kill -STOP}) for between a few ms and three ttls, wherever it stands. */
    public static void pauses(Nemesis nemesis, ChildHolder child, Duration ttl) {
        nemesis.add("SIGSTOP of child holder " + child.worker(), 2, Duration.ofMillis(20), ttl.multipliedBy(3),
                random -> {
                    child.pause();
                    return child::resume;
                });
    }

    /**
     * Faults on one holder's link to the lease store: a freeze past the ttl or not, a lossy partition (its
     * connections reset when it ends, as after a real one), a slow link, and reset connections.
     */
    public static void leaseLinkFaults(Nemesis nemesis, String holder, TcpProxy link, Duration ttl, double weight) {
        nemesis.add("froze the lease-store link of " + holder, weight, ttl.dividedBy(4), ttl.multipliedBy(2),
                random -> {
                    link.freeze();
                    return link::unfreeze;
                });
        nemesis.add("dropped the lease-store packets of " + holder, weight, ttl.dividedBy(4), ttl.multipliedBy(2),
                random -> {
                    link.drop(true);
                    return () -> {
                        link.drop(false);
                        link.reset();
                    };
                });
        nemesis.add("slowed the lease-store link of " + holder, weight, ttl, ttl.multipliedBy(3), random -> {
            link.delay(Duration.ofMillis(20 + random.nextInt((int) Math.max(1, ttl.toMillis() / 3))));
            return () -> link.delay(Duration.ZERO);
        });
        nemesis.add("reset the lease-store connections of " + holder, weight, Duration.ZERO, Duration.ZERO, random -> {
            link.reset();
            return Nemesis.Off.NOTHING;
        });
    }

    /**
     * Faults on one holder's link to the resource database: COMMIT replies held back, often past the client's socket
     * timeout (the write ends UNKNOWN though it committed, and the check finds it in the table), and a slow link on
     * which a write outlasts the lease it was started under.
     */
    public static void resourceLinkFaults(Nemesis nemesis, String holder, TcpProxy link, Duration ttl, double weight) {
        nemesis.add("delayed COMMIT replies on the resource link of " + holder, weight, ttl, ttl.multipliedBy(4),
                random -> {
                    // Half of them past the client's socket timeout.
                    Duration delay = Duration.ofMillis(RESOURCE_TIMEOUT_SECONDS * (500L + random.nextInt(1000)));
                    link.delayReplyAfter(COMMIT, delay);
                    return () -> link.delayReplyAfter(null, Duration.ZERO);
                });
        nemesis.add("slowed the resource link of " + holder, weight, ttl, ttl.multipliedBy(3), random -> {
            link.delay(Duration.ofMillis(50 + random.nextInt(400)));
            return () -> link.delay(Duration.ZERO);
        });
    }

    /**
     * Network trouble on one holder's host: its lease-store link frozen past the ttl while its resource link holds
     * every chunk for longer than a ttl. The interrupt on loss cannot stop a write already in flight (JDBC I/O does
     * not look at it), so the write reaches the resource after the successor was granted the lease and, often, after
     * the successor's first write: the stale write the fence must refuse.
     */
    public static void troubledHost(Nemesis nemesis, String holder, TcpProxy leaseLink, TcpProxy resourceLink, Duration ttl,
            double weight) {
        nemesis.add("network trouble on " + holder + ": lease-store link frozen, resource link slow", weight, ttl,
                ttl.multipliedBy(3), random -> {
                    resourceLink.delay(ttl.plusMillis(200 + random.nextInt((int) ttl.toMillis() * 3 / 2)));
                    leaseLink.freeze();
                    return () -> {
                        leaseLink.unfreeze();
                        resourceLink.delay(Duration.ZERO);
                    };
                });
    }

    /** A crash of a PostgreSQL (the lease store's or the resource's), down for a while, then recovering. */
    public static void crashes(Nemesis nemesis, String what, CrashablePostgres postgres, Duration maxDown) {
        nemesis.add("crashed " + what + " (pg_ctl stop -m immediate), then started it", 1, Duration.ZERO, maxDown,
                random -> {
                    postgres.crash();
                    return postgres::up;
                });
    }

    /** Closes what a scenario opened, last first, so that clients go before the servers they talk to. */
    public static final class Closer implements AutoCloseable {

        private final List<AutoCloseable> open = new ArrayList<>();

        public <T extends AutoCloseable> T add(T closeable) {
            open.add(closeable);
            return closeable;
        }

        @Override
        public void close() throws Exception {
            Exception first = null;
            for (int i = open.size() - 1; i >= 0; i--) {
                try {
                    open.get(i).close();
                }
                catch (Exception ex) {
                    if (first == null) {
                        first = ex;
                    }
                    else {
                        first.addSuppressed(ex);
                    }
                }
            }
            if (first != null) {
                throw first;
            }
        }
    }

    /**
     * Driver options for a holder's link to the lease store: short socket timeouts, so a frozen link fails calls
     * instead of hanging them.
     */
    public static Map<String, String> pgLinkOptions(String application) {
        return Map.of("socketTimeout", "2", "connectTimeout", "2", "ApplicationName", application);
    }

    /**
     * Driver options for a holder's link to the resource database: a socket timeout longer than the slowest
     * {@link #troubledHost} chunk, so that its late writes land, and shorter than the longest delayed COMMIT reply,
     * so that some writes end UNKNOWN although they committed. No server-side prepared statements: the driver then
     * sends the text of every COMMIT, which is how the proxy recognises it.
     */
    public static Map<String, String> resourceLinkOptions(String application) {
        return Map.of("socketTimeout", Integer.toString(RESOURCE_TIMEOUT_SECONDS), "connectTimeout", "2",
                "prepareThreshold", "0", "ApplicationName", application);
    }

    /** {@link #resourceLinkOptions} as a JDBC URL's query, for a child JVM. */
    public static String resourceLinkQuery() {
        return "socketTimeout=" + RESOURCE_TIMEOUT_SECONDS + "&connectTimeout=2&prepareThreshold=0";
    }
}
