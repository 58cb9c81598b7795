package dev.lease.faults.mutants;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ArgumentsSource;

/**
 * Runs the scenarios of a class once per mutant that {@link MutantRuns} lists for it: for real, then against the fence
 * without the comparison ({@link Mutant#FENCE}), in the same test JVM, each run with servers of its own (the classes
 * start them {@code @BeforeParameterizedClassInvocation}); or only against the mutant {@value Mutant#PROPERTY} names
 * (the extra surefire executions of {@code -Psoak}). Scenario classes get it from {@link FaultScenarios}.
 */
@Documented
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@ParameterizedClass(name = "{0}")
@ArgumentsSource(MutantRuns.class)
@ExtendWith(MutantRuns.class)
public @interface AgainstMutants {

    /**
     * Whether {@code ./mvnw verify} runs the class against the fence mutant as well. Every class with a CORRECTNESS
     * scenario must ({@code MutantTest} fails the build otherwise); a class of EFFICIENCY leases only says false: its
     * ledger never compares tokens, so there is no comparison to break.
     */
    boolean fence() default true;
}
