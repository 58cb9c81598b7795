package dev.lease.faults.mutants;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a scenario class against a mutant in the ordinary test run: put on an empty subclass of the scenario class
 * (the {@code *FenceMutantTest} classes), it makes {@link MutantRuns} run every inherited scenario against
 * {@link #value()}. Being classes of their own, these mutant runs go to the test JVMs alongside the real
 * scenarios, instead of in a pass of their own after them. A surefire execution that asks for a mutant with
 * {@value Mutant#PROPERTY} ({@code -Psoak}) does so for whole classes without this annotation.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface AgainstMutant {

    /** The mutant the scenarios of the class run against. */
    Mutant value();
}
