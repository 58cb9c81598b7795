package dev.lease.aop;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.function.Supplier;

import org.springframework.core.KotlinDetector;

import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.WhenBusy;

/**
 * Everything about one {@code @Leased} method that can be known before it is called, parsed once.
 *
 * @param method the annotated method, for messages
 * @param name the lease name, literal or template
 * @param kind the lease kind
 * @param ttl the ttl, or null for {@code lease.default-ttl}
 * @param renewEvery the renewal interval, or null for the default
 * @param waitFor how long to wait when busy
 * @param whenBusy what to do when still busy
 * @param skipValue what a skipped call returns
 * @param async whether the method or its class is {@code @Async}, so the lease must sit inside the hand-off
 * @param fence the resource to fence at grant, literal or template, or null for none
 * @param holdAtLeast how long after its grant the lease is kept at least; zero for none
 */
record LeasedMethod(Method method, NameTemplate name, LeaseKind kind, Duration ttl, Duration renewEvery,
        Duration waitFor, WhenBusy whenBusy, Supplier<Object> skipValue, boolean async, NameTemplate fence,
        Duration holdAtLeast) {

    /** @param fenceResource the evaluated fence resource, or null for none */
    LeaseSpec spec(String name, String fenceResource) {
        LeaseSpec spec = LeaseSpec.of(name, kind).withWaitFor(waitFor).withNameTemplate(this.name.declared());
        if (fenceResource != null) {
            spec = spec.withFence(fenceResource);
        }
        if (ttl != null) {
            spec = spec.withTtl(ttl);
        }
        if (renewEvery != null) {
            spec = spec.withRenewEvery(renewEvery);
        }
        if (!holdAtLeast.isZero()) {
            spec = spec.withHoldAtLeast(holdAtLeast);
        }
        return spec;
    }

    /**
     * Whether the method returns a {@code Mono} or {@code Flux}, whose subscription runs under the lease, or is a
     * Kotlin suspend function, which Spring's proxy calls as a {@code Mono}.
     */
    boolean reactive() {
        return method != null && ReactiveTypes.isReactive(method);
    }

    /** Kotlin functions are final unless declared {@code open}: the start of the fix for those. */
    static String openHint(Method method) {
        return Modifier.isFinal(method.getModifiers()) && KotlinDetector.isKotlinType(method.getDeclaringClass())
                ? "Kotlin functions and classes are final unless open: declare them open, or apply the kotlin-spring "
                        + "compiler plugin (it opens @Component classes); in general, " : "";
    }

    /** How error messages name the lease: its literal name or its template, quoted. */
    String describeName() {
        return name.describe();
    }

    /** How startup errors begin: {@code @Leased on InvoiceService.bill(long) (lease 'invoice-#{#id}')}. */
    String culprit() {
        return culprit(method, name.describe());
    }

    /** @param quotedName the lease name or template as written, quoted */
    static String culprit(Method method, String quotedName) {
        return "@Leased on " + describe(method) + " (lease " + quotedName + ")";
    }

    /**
     * How error messages name this method: {@code InvoiceService.bill(long)}, or {@code suspend InvoiceService.bill(long)}
     * for a Kotlin suspend function (without the continuation its JVM method takes last).
     */
    String describe() {
        return describe(method);
    }

    static String describe(Method method) {
        boolean suspending = SuspendFunctions.is(method);
        StringBuilder sb = new StringBuilder(suspending ? "suspend " : "")
                .append(method.getDeclaringClass().getSimpleName()).append('.').append(method.getName()).append('(');
        Class<?>[] types = method.getParameterTypes();
        for (int i = 0; i < types.length - (suspending ? 1 : 0); i++) {
            sb.append(i > 0 ? ", " : "").append(types[i].getSimpleName());
        }
        return sb.append(')').toString();
    }
}
