package io.kvrouter.loadtest.baselines;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.loadtest.baselines.PrebleTree.Node;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PrebleTreeTest {

  private static final java.util.function.BiConsumer<Node, Node> IGNORE = (lower, upper) -> {};

  @Test
  void aPromptThatDivergesInsideANode_splitsIt_keepingTheOldLeafAndCopyingItsCountsUp() {
    PrebleTree tree = new PrebleTree();
    Node first = tree.insert(new long[] {1, 2, 3, 4}, 4, IGNORE);
    PrebleTree.place(first, 2);
    List<Node[]> splits = new ArrayList<>();
    Node second =
        tree.insert(
            new long[] {1, 2, 9}, 3, (lower, upper) -> splits.add(new Node[] {lower, upper}));

    assertThat(splits).hasSize(1);
    Node upper = splits.get(0)[1];
    assertThat(splits.get(0)[0]).isSameAs(first);
    assertThat(upper.key).containsExactly(1, 2);
    assertThat(first.key).containsExactly(3, 4);
    assertThat(first.parent).isSameAs(upper);
    assertThat(second.parent).isSameAs(upper);
    assertThat(first.contextLength).isEqualTo(4);
    assertThat(second.contextSoFar()).isEqualTo(2);
    assertThat(upper.refs(2)).isEqualTo(1);
    assertThat(upper.allocation.get(2)).isTrue();

    PrebleTree.finish(first, 2);
    assertThat(upper.refs(2)).isZero();
    assertThat(first.refs(2)).isZero();
  }

  @Test
  void theImportantNode_isTheNearestAncestorLongerThanEverythingBeforeIt() {
    PrebleTree tree = new PrebleTree();
    Node base = tree.insert(new long[] {1, 2, 3, 4, 5}, 5, IGNORE);
    Node turn = tree.insert(new long[] {1, 2, 3, 4, 5, 6, 7}, 7, IGNORE);
    assertThat(turn.parent).isSameAs(base);
    assertThat(base.large()).isTrue(); // 5 blocks after 0
    assertThat(turn.large()).isFalse(); // 2 blocks after 5
    assertThat(PrebleTree.important(turn)).isSameAs(base);
    assertThat(PrebleTree.distance(turn, base)).isEqualTo(1);
    Node exact = tree.insert(new long[] {1, 2, 3, 4, 5}, 5, IGNORE);
    assertThat(exact).isSameAs(base);
  }
}
