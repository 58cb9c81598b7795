package dev.lease.aop;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.core.io.support.SpringFactoriesLoader;

import dev.lease.Leased;
import dev.lease.leader.LeaderOnly;

/** The hints a native image needs for @Leased and @LeaderOnly, as Spring AOT finds them: through aot.factories. */
class LeaseAopRuntimeHintsTest {

    private final RuntimeHints hints = new RuntimeHints();

    LeaseAopRuntimeHintsTest() {
        SpringFactoriesLoader.forResourceLocation("META-INF/spring/aot.factories")
                .load(RuntimeHintsRegistrar.class).forEach(registrar -> registrar.registerHints(hints, null));
    }

    @Test
    void theSpelRootOfNameTemplatesCanBeReadByReflection() {
        for (String getter : List.of("getArgs", "getMethod", "getMethodName", "getTarget")) {
            assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(LeasedExpressionRoot.class, getter))
                    .as("#root.%s", getter).accepts(hints);
        }
    }

    @Test
    void theAnnotationsAttributesCanBeRead() {
        for (Class<?> annotation : List.of(Leased.class, LeaderOnly.class)) {
            assertThat(RuntimeHintsPredicates.reflection().onType(annotation)
                    .withMemberCategory(MemberCategory.INVOKE_DECLARED_METHODS)).as(annotation.getName()).accepts(hints);
        }
    }
}
