"""The CIFAR-100 label set: 100 fine classes and the standard 20 superclasses of 5 each.

This is the data set's definition (Krizhevsky, 2009), needed offline for the class order of
the CIFAR-100 prediction set and for the superclass cost matrix.
"""

from __future__ import annotations

__all__ = ["CIFAR100_CLASSES", "CIFAR100_PEOPLE", "CIFAR100_SUPERCLASSES"]

CIFAR100_SUPERCLASSES: dict[str, tuple[str, ...]] = {
    "aquatic_mammals": ("beaver", "dolphin", "otter", "seal", "whale"),
    "fish": ("aquarium_fish", "flatfish", "ray", "shark", "trout"),
    "flowers": ("orchid", "poppy", "rose", "sunflower", "tulip"),
    "food_containers": ("bottle", "bowl", "can", "cup", "plate"),
    "fruit_and_vegetables": ("apple", "mushroom", "orange", "pear", "sweet_pepper"),
    "household_electrical_devices": ("clock", "keyboard", "lamp", "telephone", "television"),
    "household_furniture": ("bed", "chair", "couch", "table", "wardrobe"),
    "insects": ("bee", "beetle", "butterfly", "caterpillar", "cockroach"),
    "large_carnivores": ("bear", "leopard", "lion", "tiger", "wolf"),
    "large_man-made_outdoor_things": ("bridge", "castle", "house", "road", "skyscraper"),
    "large_natural_outdoor_scenes": ("cloud", "forest", "mountain", "plain", "sea"),
    "large_omnivores_and_herbivores": ("camel", "cattle", "chimpanzee", "elephant", "kangaroo"),
    "medium_mammals": ("fox", "porcupine", "possum", "raccoon", "skunk"),
    "non-insect_invertebrates": ("crab", "lobster", "snail", "spider", "worm"),
    "people": ("baby", "boy", "girl", "man", "woman"),
    "reptiles": ("crocodile", "dinosaur", "lizard", "snake", "turtle"),
    "small_mammals": ("hamster", "mouse", "rabbit", "shrew", "squirrel"),
    "trees": ("maple_tree", "oak_tree", "palm_tree", "pine_tree", "willow_tree"),
    "vehicles_1": ("bicycle", "bus", "motorcycle", "pickup_truck", "train"),
    "vehicles_2": ("lawn_mower", "rocket", "streetcar", "tank", "tractor"),
}

#: The 100 fine classes in the standard (alphabetical) label order.
CIFAR100_CLASSES: tuple[str, ...] = tuple(sorted(c for group in CIFAR100_SUPERCLASSES.values() for c in group))

#: The five "people" classes whose mistakes cost 10x in the paper's first cost matrix.
CIFAR100_PEOPLE: tuple[str, ...] = CIFAR100_SUPERCLASSES["people"]
