package dev.lease.faults.mutants;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.platform.commons.support.HierarchyTraversalMode;
import org.junit.platform.commons.support.ReflectionSupport;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;

import dev.lease.faults.checker.History;
import dev.lease.faults.checker.History.Kind;
import dev.lease.faults.checker.History.Outcome;
import dev.lease.faults.checker.HistoryChecker;
import dev.lease.faults.workload.Ledger;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;

/** The mutants must be the bugs they claim to be, and the measures around them must count what they say. */
class MutantTest {

    private static final String SCENARIOS = "dev.lease.faults.scenarios";

    private final DataSource db = new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2)
            .generateUniqueName(true).build();

    @AfterEach
    void realSystem() {
        Mutant.activate(Mutant.NONE);
    }

    @Test
    void theFenceMutantAcceptsAStaleTokenTheRealFenceRefuses() {
        Ledger real = new Ledger(db, Ledger.Check.FENCED, "real");
        assertThat(real.write(5, 1)).isTrue();
        assertThat(real.write(4, 2)).as("token 4 after token 5, real fence").isFalse();
        Mutant.activate(Mutant.FENCE);
        Ledger mutant = new Ledger(db, Ledger.Check.FENCED, "mutant");
        assertThat(mutant.write(5, 1)).isTrue();
        assertThat(mutant.write(4, 2)).as("token 4 after token 5, fence mutant").isTrue();
    }

    @Test
    void theRepeatingBackendRepeatsThePreviousTokenAndStillReleasesTheRealGrant() throws Exception {
        RepeatingTokenBackend backend = new RepeatingTokenBackend(new InMemoryLeaseBackend(), 1);
        List<Long> tokens = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            Optional<Grant> grant = backend.tryAcquire(new GrantRequest("repeated", Duration.ofMinutes(1), r -> {
            }));
            // Released by the real grant, or the next acquire would find the name busy.
            assertThat(grant).as("grant " + i).isPresent();
            assertThat(backend.renew(grant.get())).isTrue();
            tokens.add(grant.get().token().getAsLong());
            backend.release(grant.get());
        }
        assertThat(tokens.stream().distinct().count()).as("distinct tokens among " + tokens).isLessThan(tokens.size());
    }

    /**
     * The engine batches the renewals of a backend whose traits say so, and the repeating backend forwards the
     * store's traits: its batch must reach the store as the store's own grants and come back as the engine's.
     */
    @Test
    void theRepeatingBackendKeepsTheStoresTraitsAndRenewsItsBatchesThroughIt() throws Exception {
        InMemoryLeaseBackend store = new InMemoryLeaseBackend();
        RepeatingTokenBackend<?> backend = new RepeatingTokenBackend<>(store, 1);
        assertThat(backend.traits()).isEqualTo(store.traits());
        Grant kept = backend.tryAcquire(new GrantRequest("kept", Duration.ofMinutes(1), r -> {
        })).orElseThrow();
        Grant revoked = backend.tryAcquire(new GrantRequest("revoked", Duration.ofMinutes(1), r -> {
        })).orElseThrow();
        assertThat(backend.renewAll(List.of(kept, revoked))).as("both still held").isEmpty();
        assertThat(store.revoke("revoked")).isTrue();
        assertThat(backend.renewAll(List.of(kept, revoked))).as("lost, as the engine holds it").containsExactly(revoked);
    }

    @Test
    void childrenAreToldTheMutantAndScenarioNamesCarryIt() {
        Mutant.activate(Mutant.NO_LOCAL_DEADLINE);
        assertThat(Mutant.childArgs(java.util.Map.of("lease", "x"))).containsEntry("mutant", "no-local-deadline");
        assertThat(Mutant.suffix()).isEqualTo("-mutant-no-local-deadline");
        assertThat(Mutant.of("SWALLOWED-INTERRUPT")).isEqualTo(Mutant.SWALLOWED_INTERRUPT);
        assertThatThrownBy(() -> Mutant.of("fencee")).hasMessageContaining("lease-test.mutant");
    }

    /** Write 3 (token 1) is refused after write 4 (token 2) completed; write 5 (token 1) was refused before that. */
    @Test
    void staleWritesRefusedAfterAWriteCountOnlyThatOrder() {
        History history = new History();
        history.invoke(1, 0, Kind.ACQUIRE, 100);
        history.complete(1, Outcome.OK, 1, 110, null);
        history.invoke(2, 1, Kind.ACQUIRE, 120);
        history.complete(2, Outcome.OK, 2, 130, null);
        history.invoke(4, 1, Kind.WRITE, 140);
        history.complete(4, Outcome.OK, 2, 150, null);
        history.invoke(5, 0, Kind.WRITE, 145);
        history.complete(5, Outcome.FAIL, 1, 160, null);
        history.invoke(3, 0, Kind.WRITE, 170);
        history.complete(3, Outcome.FAIL, 1, 180, null);
        assertThat(HistoryChecker.staleWritesRefusedAfterWrite(history)).isEqualTo(1);
    }

    @Test
    void aScenarioClassRunsForRealThenAgainstTheFenceMutantOrOnlyAgainstTheMutantRequested() throws Exception {
        Class<?> jdbc = Class.forName(SCENARIOS + ".jdbc.JdbcFaultScenariosTest");
        Class<?> redis = Class.forName(SCENARIOS + ".redis.RedisNemesisTest");
        assertThat(MutantRuns.mutantsFor(jdbc, Mutant.NONE)).containsExactly(Mutant.NONE, Mutant.FENCE);
        assertThat(MutantRuns.mutantsFor(redis, Mutant.NONE)).containsExactly(Mutant.NONE);
        assertThat(MutantRuns.mutantsFor(jdbc, Mutant.REPEATED_TOKEN)).containsExactly(Mutant.REPEATED_TOKEN);
        assertThat(MutantRuns.mutantsFor(redis, Mutant.SWALLOWED_INTERRUPT)).containsExactly(Mutant.SWALLOWED_INTERRUPT);
        Class<?> once = Class.forName(SCENARIOS + ".once.ScheduledOnceFaultScenariosTest");
        assertThat(MutantRuns.mutantsFor(once, Mutant.NONE)).containsExactly(Mutant.NONE, Mutant.FENCE);
        // Its fence mutant is the template without initialisation at grant (MutantGrantSteps).
        Class<?> kafka = Class.forName(SCENARIOS + ".kafka.KafkaFaultScenariosTest");
        assertThat(MutantRuns.mutantsFor(kafka, Mutant.NONE)).containsExactly(Mutant.NONE, Mutant.FENCE);
    }

    /**
     * ./mvnw verify must run every CORRECTNESS scenario against the fence mutant: every class of scenarios is a
     * {@link FaultScenarios} that runs against it, but the Redis and Redlock ones (EFFICIENCY only: their ledgers never
     * compare tokens, nothing to break) and the batched renewal one (no ledger: it checks which leases were lost). The
     * scheduled {@code @Once} one is a FaultScenarios like the others: against the fence mutant its job's key guards
     * nothing, and it must detect the duplicates.
     */
    @Test
    void everyCorrectnessScenarioClassRunsAgainstTheFenceMutant() {
        Set<String> efficiencyOnly = Set.of("RedisFaultScenariosTest", "RedisNemesisTest", "RedlockNemesisTest");
        Set<String> withoutLedger = Set.of("BatchedRenewalFaultScenariosTest");
        List<Class<?>> scenarioClasses = ReflectionSupport.findAllClassesInPackage(SCENARIOS,
                type -> !Modifier.isAbstract(type.getModifiers()) && type.getEnclosingClass() == null
                        && !ReflectionSupport.findMethods(type, method -> method.isAnnotationPresent(Test.class),
                                HierarchyTraversalMode.TOP_DOWN).isEmpty(),
                name -> true);
        assertThat(scenarioClasses).as("scenario classes").hasSizeGreaterThanOrEqualTo(14);
        assertThat(scenarioClasses).as("scenario classes that are not FaultScenarios")
                .filteredOn(type -> !FaultScenarios.class.isAssignableFrom(type)).extracting(Class::getSimpleName)
                .containsExactlyInAnyOrderElementsOf(withoutLedger);
        assertThat(scenarioClasses).as("scenario classes that ./mvnw verify does not run against the fence mutant")
                .filteredOn(FaultScenarios.class::isAssignableFrom)
                .filteredOn(type -> !MutantRuns.mutantsFor(type, Mutant.NONE).contains(Mutant.FENCE))
                .extracting(Class::getSimpleName).containsExactlyInAnyOrderElementsOf(efficiencyOnly);
    }

    @Test
    void theDetectionTableShowsTheCheckersFirstProblem() {
        AssertionError checker = new AssertionError("zk: 2 problem(s), history in /x.json\n  stale write accepted: "
                + "write 7 | token 1\n  second");
        assertThat(FaultDetection.firstProblem(checker)).isEqualTo("stale write accepted: write 7 \\| token 1");
        assertThat(FaultDetection.firstProblem(new IllegalStateException("child\nnever started")))
                .isEqualTo("IllegalStateException: child never started");
    }
}
