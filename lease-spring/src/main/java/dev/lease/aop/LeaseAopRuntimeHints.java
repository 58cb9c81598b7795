package dev.lease.aop;

import org.jspecify.annotations.Nullable;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

import dev.lease.Leased;
import dev.lease.leader.LeaderOnly;

/**
 * What a native image must keep for {@code @Leased} and {@code @LeaderOnly} (registered in
 * {@code META-INF/spring/aot.factories}, so that plain Spring applications get it too). The proxies themselves need
 * nothing here: the advisors are {@code AbstractAdvisingBeanPostProcessor}s, whose proxy classes Spring AOT generates
 * at build time.
 */
class LeaseAopRuntimeHints implements RuntimeHintsRegistrar {

    @Override
    public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
        // A name template's #root.args, #root.method, #root.methodName and #root.target are read through these
        // getters by SpEL, by reflection.
        hints.reflection().registerType(LeasedExpressionRoot.class, MemberCategory.INVOKE_PUBLIC_METHODS);
        // The attributes are read through the annotation interfaces' methods, by reflection.
        hints.reflection().registerType(Leased.class, MemberCategory.INVOKE_DECLARED_METHODS);
        hints.reflection().registerType(LeaderOnly.class, MemberCategory.INVOKE_DECLARED_METHODS);
    }
}
