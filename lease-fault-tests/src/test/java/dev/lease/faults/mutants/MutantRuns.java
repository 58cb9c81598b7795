package dev.lease.faults.mutants;

import java.lang.reflect.Method;
import java.util.List;
import java.util.stream.Stream;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.InvocationInterceptor;
import org.junit.jupiter.api.extension.ReflectiveInvocationContext;
import org.junit.jupiter.params.ParameterInfo;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.ArgumentsProvider;
import org.junit.jupiter.params.support.ParameterDeclarations;
import org.junit.platform.commons.support.AnnotationSupport;
import org.opentest4j.TestAbortedException;

import dev.lease.LeaseKind;
import dev.lease.faults.harness.FaultRun;

/**
 * The runs of a scenario class ({@link AgainstMutants}): as an {@link ArgumentsProvider} it lists the mutants the class
 * runs against ({@link #mutantsFor}), one run of the class each; around every scenario of a mutant run it turns the
 * mutant on. In a mutant run a scenario
 * that fails (the history check or the scenario's own assertions: any {@link AssertionError}) has <em>detected</em>
 * the mutant: that is recorded in {@link FaultDetection} and the test passes. A scenario that passes did not detect
 * it: recorded too, and a failure of the test only for a CORRECTNESS scenario against {@link Mutant#FENCE}, which
 * every such scenario must catch (it exists to show that the fence refused a stale write), or for another scenario
 * that declares it must ({@link #started(String, String, boolean)}: the scheduled {@code @Once} one, whose fence is the
 * key). Any other exception
 * (a timeout, a child that did not start) is no detection: it is recorded as an error and fails the test where a
 * detection is required.
 */
public final class MutantRuns implements ArgumentsProvider, InvocationInterceptor {

    private static final Log log = LogFactory.getLog(MutantRuns.class);

    /**
     * The first fault run the current test started: its scenario name, kind, and whether it must detect the fence
     * mutant.
     */
    private record Started(String scenario, String kind, boolean fenceRequired) {
    }

    private static volatile Started started;

    /**
     * Called by every {@link FaultRun}: the name of the scenario the current test runs; a CORRECTNESS one must detect
     * the fence mutant.
     */
    public static void started(String scenario, LeaseKind kind) {
        started(scenario, kind.name(), kind == LeaseKind.CORRECTNESS);
    }

    /**
     * Called by a scenario that runs without a {@link FaultRun} (its checks are its own): its name, its kind as the
     * detection table shows it, and whether it must detect the fence mutant, which then fails the build if it does
     * not.
     */
    public static void started(String scenario, String kind, boolean fenceRequired) {
        if (started == null) {
            started = new Started(scenario, kind, fenceRequired);
        }
    }

    /**
     * The mutants {@code testClass} runs against, one run each: {@code requested} alone when it names one (the extra
     * executions of {@code -Psoak}), otherwise the real thing and, unless its {@link AgainstMutants} says otherwise,
     * the fence mutant.
     */
    static List<Mutant> mutantsFor(Class<?> testClass, Mutant requested) {
        if (requested != Mutant.NONE) {
            return List.of(requested);
        }
        boolean fence = AnnotationSupport.findAnnotation(testClass, AgainstMutants.class).map(AgainstMutants::fence)
                .orElse(false);
        return fence ? List.of(Mutant.NONE, Mutant.FENCE) : List.of(Mutant.NONE);
    }

    @Override
    public Stream<? extends Arguments> provideArguments(ParameterDeclarations parameters, ExtensionContext context) {
        return mutantsFor(context.getRequiredTestClass(), Mutant.requested()).stream().map(mutant -> Arguments.of(
                Named.of(mutant == Mutant.NONE ? "real" : "against the " + mutant.title, mutant)));
    }

    @Override
    public void interceptTestMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> invocationContext,
            ExtensionContext extensionContext) throws Throwable {
        ParameterInfo parameters = ParameterInfo.get(extensionContext);
        Mutant mutant = parameters == null ? Mutant.NONE : parameters.getArguments().get(0, Mutant.class);
        if (mutant == Mutant.NONE) {
            invocation.proceed();
            return;
        }
        started = null;
        Mutant.activate(mutant);
        log.info("Mutant run of " + extensionContext.getDisplayName() + " against the " + mutant.title + " (seed "
                + Mutant.SEED + ", " + Mutant.PROPERTY + "=" + mutant.id + ")");
        long begin = System.nanoTime();
        Throwable failure = null;
        try {
            invocation.proceed();
        }
        catch (TestAbortedException skipped) {
            throw skipped;
        }
        catch (Throwable ex) {
            failure = ex;
        }
        finally {
            Mutant.activate(Mutant.NONE);
        }
        double seconds = (System.nanoTime() - begin) / 1e9;
        Started run = started;
        String scenario = run != null ? run.scenario() : extensionContext.getRequiredTestMethod().getName();
        String kind = run != null ? run.kind() : "?";
        boolean required = mutant == Mutant.FENCE && run != null && run.fenceRequired();
        FaultDetection.Result result = failure instanceof AssertionError ? FaultDetection.Result.DETECTED
                : failure == null ? FaultDetection.Result.NOT_DETECTED : FaultDetection.Result.ERROR;
        FaultDetection.record(new FaultDetection.Cell(scenario, kind, mutant, result,
                failure == null ? "" : FaultDetection.firstProblem(failure), seconds));
        log.info("Mutant run of " + scenario + " against the " + mutant.title + ": " + result
                + (failure == null ? "" : ": " + FaultDetection.firstProblem(failure)));
        if (required && result == FaultDetection.Result.NOT_DETECTED) {
            throw new AssertionError(scenario + " passed against the " + mutant.title + (LeaseKind.CORRECTNESS.name()
                    .equals(kind) ? ": a CORRECTNESS scenario must see at least one stale write land after a "
                            + "successor's write and be refused, and no such write happened (or the check did not "
                            + "notice it was accepted)"
                            : ": the scenario must detect it (see its javadoc for what the mutant breaks there)"));
        }
        if (required && result == FaultDetection.Result.ERROR) {
            throw failure;
        }
    }
}
