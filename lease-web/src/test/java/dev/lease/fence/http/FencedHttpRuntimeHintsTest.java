package dev.lease.fence.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.core.io.support.SpringFactoriesLoader;

/** @FencedRequest's attributes can be read in a native image, as Spring AOT finds the hints: through aot.factories. */
class FencedHttpRuntimeHintsTest {

    @Test
    void theAnnotationsAttributesCanBeRead() {
        RuntimeHints hints = new RuntimeHints();
        SpringFactoriesLoader.forResourceLocation("META-INF/spring/aot.factories")
                .load(RuntimeHintsRegistrar.class).forEach(registrar -> registrar.registerHints(hints, null));

        assertThat(RuntimeHintsPredicates.reflection().onType(FencedRequest.class)
                .withMemberCategory(MemberCategory.INVOKE_DECLARED_METHODS)).accepts(hints);
    }
}
